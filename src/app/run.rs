//! The live view: terminal setup and restore, and the event loop.
//!
//! The loop waits on samples, terminal input and signals, and redraws only
//! when one of them changed something: an idle screen costs nothing between
//! samples.

use super::App;
use super::keymap::Key;
use crate::cli::{Cli, ReplayArgs};
use crate::collect::Sampler;
use crate::collect::netns::Target;
use crate::config::Config;
use crate::ui;
use anyhow::{Context, Result, bail};
use crossterm::event::{
    DisableMouseCapture, EnableMouseCapture, Event, EventStream, KeyCode, KeyEvent, KeyEventKind,
    KeyModifiers, MouseButton, MouseEventKind,
};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use futures_util::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{IsTerminal, Stdout, stdout};
use tokio::signal::unix::{SignalKind, signal};

pub fn run(cli: &Cli, config: &Config) -> Result<()> {
    if !stdout().is_terminal() {
        bail!(
            "stdout is not a terminal, and the live view needs one; for scripts use \
             `netlens snapshot` (or `netlens snapshot --json`)"
        );
    }
    let target = Target::from_args(cli.collect.netns.as_deref(), cli.collect.pid);
    // Before touching the terminal, so a bad namespace is a plain error.
    let (sampler, samples) = Sampler::spawn(target.clone(), cli.collect.interval)?;
    // A bad filter or interface stops here; a missing privilege does not
    // (the Flows tab says how to grant it).
    let (capture, packets) = crate::capture::live::start(&target, &cli.capture)?;
    let dns = crate::dns::DnsMonitor::start(&target, &cli.dns, cli.collect.interval)?;
    dns.attach(capture.as_ref());
    let mut app = configured_app(cli, config);
    app.dns.monitor = Some(dns);
    app.demand = sampler.demand();
    app.flows.capture = capture;
    app.load.netns = target
        .open()?
        .map(|file| (std::sync::Arc::new(file), target.label().to_string()));
    app.record_path = cli.record.clone();
    if let Some(path) = &cli.record {
        let label = Target::from_args(cli.collect.netns.as_deref(), cli.collect.pid);
        let meta = crate::record::meta(label.label(), cli.collect.interval);
        let mut recorder =
            crate::record::Recorder::create_with_capture(path, &meta, app.flows.capture.as_ref())?;
        recorder.thresholds = app.thresholds;
        app.recording = Some(recorder);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let guard = TerminalGuard::enter(cli.mouse)?;
    let result = runtime.block_on(event_loop(&mut app, Some(samples), packets, &guard));
    drop(guard);
    drop(sampler);
    let closed = app.stop_recording();
    result.and(closed)
}

/// `netlens replay FILE`: the live view's UI, fed by a recording.
pub fn replay(cli: &Cli, args: &ReplayArgs, config: &Config) -> Result<()> {
    if !stdout().is_terminal() {
        bail!(
            "stdout is not a terminal, and replay needs one; for scripts use \
             `netlens replay --json FILE` or `netlens replay --info FILE`"
        );
    }
    let reader = crate::record::reader::Reader::open(&args.file)?;
    let mut player = crate::record::player::Player::new(reader)?;
    player.speed = args.speed;
    let mut app = configured_app(cli, config);
    app.start_replay(player);
    if let Some(at) = &args.at {
        app.jump_to_text(at);
        if let Some(error) = app.error.take() {
            bail!("--at {at}: {error}");
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let guard = TerminalGuard::enter(cli.mouse)?;
    let result = runtime.block_on(event_loop(&mut app, None, None, &guard));
    drop(guard);
    result
}

/// The App as the command line and the config (already merged into `cli`
/// by main) ask: first tab, colour, compact layout, thresholds, columns.
fn configured_app(cli: &Cli, config: &Config) -> App {
    let color = !cli.no_color && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let tab = cli.tab.unwrap_or(super::tabs::Tab::Interfaces);
    let mut app = App::new(tab, cli.collect.interval, color);
    app.set_thresholds(config.thresholds);
    app.columns = config.columns.clone();
    app.config = config.clone();
    app.config_path = cli.config.clone().or_else(crate::config::default_path);
    app.compact = cli.compact;
    app
}

/// Raw mode, alternate screen and mouse capture for as long as it lives.
/// Dropping it, or a panic, puts the terminal back.
struct TerminalGuard {
    mouse: bool,
}

impl TerminalGuard {
    fn enter(mouse: bool) -> Result<Self> {
        let previous_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_terminal(true);
            previous_hook(info);
        }));
        terminal::enable_raw_mode().context("cannot put the terminal in raw mode")?;
        let guard = Self { mouse };
        execute!(stdout(), EnterAlternateScreen, cursor::Hide)
            .context("cannot set up the terminal")?;
        if mouse {
            execute!(stdout(), EnableMouseCapture).context("cannot enable the mouse")?;
        }
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal(self.mouse);
    }
}

fn restore_terminal(mouse: bool) {
    if mouse {
        let _ = execute!(stdout(), DisableMouseCapture);
    }
    let _ = execute!(stdout(), LeaveAlternateScreen, cursor::Show);
    let _ = terminal::disable_raw_mode();
}

/// Samples come from the sampler (live) or from the replay player; the
/// rest of the loop cannot tell them apart.
async fn event_loop(
    app: &mut App,
    mut samples: Option<tokio::sync::mpsc::UnboundedReceiver<crate::collect::SamplerEvent>>,
    mut packets: Option<tokio::sync::mpsc::UnboundedReceiver<crate::capture::live::CaptureEvent>>,
    _guard: &TerminalGuard,
) -> Result<()> {
    let mut terminal: Terminal<CrosstermBackend<Stdout>> =
        Terminal::new(CrosstermBackend::new(stdout())).context("cannot open the terminal")?;
    let mut input = EventStream::new();
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut load_events = app
        .load
        .take_events()
        .context("the load channel is taken")?;
    let mut dirty = true;
    // Capture batches arrive up to ten times a second: they mark the screen
    // stale, and it is redrawn at most every CAPTURE_REDRAW.
    let mut capture_stale = false;
    let mut last_draw = tokio::time::Instant::now();
    while !app.quit {
        app.publish_demand();
        if dirty {
            if std::mem::take(&mut app.repaint) {
                terminal.clear()?;
            }
            terminal.draw(|frame| ui::draw(frame, app))?;
            last_draw = tokio::time::Instant::now();
            capture_stale = false;
        }
        dirty = false;
        let replay_due = app.replay_deadline(std::time::Instant::now());
        // Every branch decides whether the next turn redraws.
        tokio::select! {
            event = next_sample(&mut samples) => match event {
                Some(event) => dirty = app.on_sampler(event),
                None => bail!("the sampler thread stopped"),
            },
            () = replay_wait(replay_due) => {
                dirty = app.replay_tick(std::time::Instant::now());
            }
            event = input.next() => match event {
                Some(Ok(event)) => dirty = on_terminal_event(app, event),
                Some(Err(error)) => return Err(error).context("cannot read the terminal"),
                None => return Ok(()),
            },
            Some(event) = load_events.recv() => dirty = app.on_load(event),
            event = next_capture(&mut packets) => match event {
                Some(event) => {
                    capture_stale |= app.on_capture(event);
                }
                None => packets = None,
            },
            _ = tokio::time::sleep_until(last_draw + CAPTURE_REDRAW), if capture_stale => {
                dirty = true;
            }
            _ = sigterm.recv() => return Ok(()),
            _ = sighup.recv() => return Ok(()),
            _ = sigint.recv() => return Ok(()),
        }
    }
    Ok(())
}

/// The shortest time between two redraws caused by captured packets.
const CAPTURE_REDRAW: std::time::Duration = std::time::Duration::from_millis(200);

/// The next capture event, or never when capture is off.
async fn next_capture(
    packets: &mut Option<tokio::sync::mpsc::UnboundedReceiver<crate::capture::live::CaptureEvent>>,
) -> Option<crate::capture::live::CaptureEvent> {
    match packets {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

async fn next_sample(
    samples: &mut Option<tokio::sync::mpsc::UnboundedReceiver<crate::collect::SamplerEvent>>,
) -> Option<crate::collect::SamplerEvent> {
    match samples {
        Some(samples) => samples.recv().await,
        None => std::future::pending().await,
    }
}

async fn replay_wait(due: Option<std::time::Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due.into()).await,
        None => std::future::pending().await,
    }
}

fn on_terminal_event(app: &mut App, event: Event) -> bool {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => {
            if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
                app.quit = true;
                return true;
            }
            convert_key(key).is_some_and(|key| app.on_key(key))
        }
        Event::Mouse(mouse) if mouse.kind == MouseEventKind::Down(MouseButton::Left) => {
            app.on_click(mouse.column, mouse.row)
        }
        Event::Resize(..) => true,
        _ => false,
    }
}

fn convert_key(event: KeyEvent) -> Option<Key> {
    Some(match event.code {
        // Ctrl-letter is its own key (Ctrl-U clears a prompt), never the
        // letter: Ctrl-S must not stop a run the way s does.
        KeyCode::Char(c) if event.modifiers.contains(KeyModifiers::CONTROL) => {
            Key::Ctrl(c.to_ascii_lowercase())
        }
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::F(n) => Key::F(n),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Backspace => Key::Backspace,
        _ => return None,
    })
}

//! The live view: terminal setup and restore, and the event loop.
//!
//! The loop waits on samples, terminal input and signals, and redraws only
//! when one of them changed something: an idle screen costs nothing between
//! samples.

use crate::app::App;
use crate::app::input::{Input, Reader};
use crate::app::keymap::{self, Action, Key};
use crate::app::prepare::Prepared;
use crate::capture::live::CaptureEvent;
use crate::collect::{Sampler, SamplerEvent};
use crate::ui;
use anyhow::{Context, Result, bail};
use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use std::io::{Stdout, Write, stdout};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::UnboundedReceiver;

/// The live view: `app` (holding the session's capture and DNS monitor)
/// fed by the sampler's `samples` and the capture's `packets` until it
/// quits or a signal; then the recordings it made are reported.
pub fn live(
    mut app: App,
    terminal: LiveTerminal,
    sampler: Sampler,
    samples: UnboundedReceiver<SamplerEvent>,
    packets: Option<UnboundedReceiver<CaptureEvent>>,
) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // New samples are prepared (findings, row order) off this thread.
    let prepared = app
        .start_preparing()
        .context("cannot start the sample preparation thread")?;
    let LiveTerminal { guard, screen } = terminal;
    let sources = Sources {
        samples: Some(samples),
        prepared: Some(prepared),
        packets,
    };
    let result = runtime.block_on(event_loop(&mut app, sources, &guard, screen));
    drop(guard);
    drop(sampler);
    let (recorded, failures) = app.stop_recording();
    // Never eprintln!: it panics when stderr is a terminal that hung up.
    let mut stderr = std::io::stderr();
    for line in recorded {
        let _ = writeln!(stderr, "netlens: {line}");
    }
    result?;
    if !failures.is_empty() {
        bail!("{}", failures.join("\nnetlens: "));
    }
    Ok(())
}

/// Replay: `app`, already playing a recording, until it quits.
pub fn replay(mut app: App, mouse: bool) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let guard = TerminalGuard::enter(mouse)?;
    let sources = Sources {
        samples: None,
        prepared: None,
        packets: None,
    };
    let result = runtime.block_on(event_loop(&mut app, sources, &guard, Screen::default()));
    drop(guard);
    result
}

/// The live view's terminal, taken before the session starts so that the
/// first frame is drawn while the collectors and the capture set up.
pub struct LiveTerminal {
    guard: TerminalGuard,
    screen: Screen,
}

impl LiveTerminal {
    /// Raw mode and the alternate screen (put back when dropped, as after
    /// an error starting the session), and `app`'s first frame.
    pub fn open(app: &mut App, mouse: bool) -> Result<Self> {
        let guard = TerminalGuard::enter(mouse)?;
        let mut screen = Screen::default();
        screen.draw(app)?;
        Ok(Self { guard, screen })
    }
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

    /// Ctrl-Z or SIGTSTP, as htop does: the terminal is put back, netlens
    /// stops as a job, and on `fg` the screen comes back.
    fn suspend(&self) {
        restore_terminal(self.mouse);
        stop_self();
        self.reenter();
    }

    /// Raw mode, alternate screen and mouse again (after a stop: the shell
    /// may have changed the terminal meanwhile).
    fn reenter(&self) {
        let _ = terminal::disable_raw_mode();
        let _ = terminal::enable_raw_mode();
        let _ = execute!(stdout(), EnterAlternateScreen, cursor::Hide);
        if self.mouse {
            let _ = execute!(stdout(), EnableMouseCapture);
        }
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

/// Stops the process the way SIGTSTP's default action does (tokio's
/// handler replaced that action), so the shell sees a stopped job; returns
/// once it is continued. In an orphaned process group (no job control) the
/// kernel discards the signal and this returns at once.
fn stop_self() {
    // SAFETY: sigaction(2) and raise(2) with plain values we own; the
    // previous action (tokio's handler) is put back after the stop.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        let mut previous: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGTSTP, &default, &mut previous);
        libc::raise(libc::SIGTSTP);
        libc::sigaction(libc::SIGTSTP, &previous, std::ptr::null_mut());
    }
}

/// The largest frame netlens draws: a bigger terminal shows it in its top
/// left corner, and the frame's two cell buffers stay within tens of MB
/// (a 4000x2000 terminal would take over 700 MB).
pub const MAX_COLUMNS: u16 = 1000;
pub const MAX_ROWS: u16 = 500;

/// The drawing side of the terminal: a ratatui Terminal sized to the
/// window (up to MAX_COLUMNS x MAX_ROWS), made anew when the size changes so
/// a shrink gives the larger buffers back.
#[derive(Default)]
struct Screen {
    terminal: Option<Terminal<CrosstermBackend<Stdout>>>,
    area: Rect,
    /// The window's size, read again only after a resize or an invalidate:
    /// crossterm opens /dev/tty for each read.
    size: Option<(u16, u16)>,
}

impl Screen {
    fn draw(&mut self, app: &mut App) -> Result<()> {
        let (columns, rows) = match self.size {
            Some(size) => size,
            None => terminal::size().context("cannot read the terminal size")?,
        };
        self.size = Some((columns, rows));
        let area = Rect::new(0, 0, columns.clamp(1, MAX_COLUMNS), rows.clamp(1, MAX_ROWS));
        if area != self.area {
            self.close();
        }
        let terminal = match &mut self.terminal {
            Some(terminal) => terminal,
            None => {
                execute!(stdout(), terminal::Clear(terminal::ClearType::All))
                    .context("cannot clear the terminal")?;
                let options = TerminalOptions {
                    viewport: Viewport::Fixed(area),
                };
                self.area = area;
                self.terminal.insert(
                    Terminal::with_options(CrosstermBackend::new(stdout()), options)
                        .context("cannot open the terminal")?,
                )
            }
        };
        terminal.draw(|frame| ui::draw(frame, app))?;
        Ok(())
    }

    /// The window changed size: read at the next draw.
    fn resized(&mut self) {
        self.size = None;
    }

    /// Everything is drawn again, on a cleared screen and at the window's
    /// size read anew, at the next draw.
    fn invalidate(&mut self) {
        self.size = None;
        self.close();
    }

    /// Drops the Terminal: the next draw makes a new one on a cleared screen.
    fn close(&mut self) {
        if let Some(mut terminal) = self.terminal.take() {
            // ratatui's Drop shows the cursor and, if that fails (the
            // terminal hung up), prints with eprintln, which panics when
            // stderr is that dead terminal too: show it here instead.
            if terminal.show_cursor().is_err() {
                std::mem::forget(terminal);
            }
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.close();
    }
}

/// What the live view's loop waits on besides the terminal (replay: none).
struct Sources {
    /// The sampler's samples, sent on to the preparation worker.
    samples: Option<UnboundedReceiver<SamplerEvent>>,
    /// The worker's prepared samples, taken into the App.
    prepared: Option<UnboundedReceiver<Prepared>>,
    packets: Option<UnboundedReceiver<CaptureEvent>>,
}

/// Samples come from the sampler (live) or from the replay player; the
/// rest of the loop cannot tell them apart. A live sample shows once the
/// preparation worker is done with it: meanwhile the previous one is drawn
/// and keys are answered.
async fn event_loop(
    app: &mut App,
    sources: Sources,
    guard: &TerminalGuard,
    mut screen: Screen,
) -> Result<()> {
    let Sources {
        mut samples,
        mut prepared,
        mut packets,
    } = sources;
    let mut input = Reader::open().context("cannot read the terminal")?;
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut resized = signal(SignalKind::window_change())?;
    let mut sigtstp = signal(SignalKind::from_raw(libc::SIGTSTP))?;
    let mut sigcont = signal(SignalKind::from_raw(libc::SIGCONT))?;
    // A live view's first frame was drawn before these handlers existed: a
    // resize meanwhile went unsignalled, so the size is read again.
    screen.resized();
    let mut load_events = app
        .load
        .take_events()
        .context("the load channel is taken")?;
    let mut dirty = true;
    // Capture batches arrive up to ten times a second: new packets of the
    // flow screen shown mark it stale, and it is redrawn at most every
    // CAPTURE_REDRAW (the rest waits for the next sample).
    let mut capture_stale = false;
    let mut last_draw = tokio::time::Instant::now();
    // The "stale" age the screen shows (whole seconds), None for "live".
    let mut drawn_stale = None;
    while !app.quit {
        app.publish_demand();
        if dirty {
            if std::mem::take(&mut app.repaint) {
                screen.invalidate();
            }
            screen.draw(app)?;
            drawn_stale = stale_seconds(app);
            last_draw = tokio::time::Instant::now();
            capture_stale = false;
        }
        dirty = false;
        let replay_due = app.replay_deadline(std::time::Instant::now());
        let stale_changes = app.stale_changes_at();
        // Every branch decides whether the next turn redraws.
        tokio::select! {
            event = next_sample(&mut samples) => match event {
                Some(event) => dirty = app.on_sampler(event),
                None => bail!("the sampler thread stopped"),
            },
            ready = next_of(&mut prepared) => match ready {
                Some(ready) => dirty = app.take_prepared(ready),
                None => bail!("the sample preparation thread stopped"),
            },
            () = wait_until(replay_due) => {
                dirty = app.replay_tick(std::time::Instant::now());
            }
            read = input.next() => match read {
                // All the keys one read brought, then one redraw: a burst
                // of typing costs one frame, not one per key.
                Ok(Some(inputs)) => {
                    for input in inputs {
                        if app.quit {
                            break;
                        }
                        match on_input(app, input) {
                            Handled::Suspend => {
                                guard.suspend();
                                screen.invalidate();
                                dirty = true;
                            }
                            Handled::Changed(changed) => dirty |= changed,
                        }
                    }
                }
                // The terminal hung up.
                Ok(None) => return Ok(()),
                Err(error) => return Err(error).context("cannot read the terminal"),
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
            // The Conntrack and Sockets tabs' sorts run on threads: shown
            // when done.
            _ = tokio::time::sleep(SORT_POLL),
                if app.conntrack.order.sorting() || app.sockets.sorting() =>
            {
                dirty = app.conntrack.order.poll() | app.sockets.poll_order();
            }
            // No sample for a while: the header turns "stale", its age
            // counting up, with no event to say so.
            () = wait_until(stale_changes), if samples.is_some() => {
                dirty = stale_seconds(app) != drawn_stale;
            }
            _ = resized.recv() => {
                screen.resized();
                dirty = true;
            }
            _ = sigtstp.recv() => {
                guard.suspend();
                screen.invalidate();
                dirty = true;
            }
            // Continued after a stop netlens did not see coming (SIGSTOP).
            _ = sigcont.recv() => {
                guard.reenter();
                screen.invalidate();
                dirty = true;
            }
            _ = sigterm.recv() => return Ok(()),
            _ = sighup.recv() => return Ok(()),
            _ = sigint.recv() => return Ok(()),
        }
    }
    Ok(())
}

fn stale_seconds(app: &App) -> Option<u64> {
    app.stale_for().map(|age| age.as_secs())
}

/// How often a running Conntrack or Sockets sort is checked for being done.
const SORT_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// The shortest time between two redraws caused by captured packets.
const CAPTURE_REDRAW: std::time::Duration = std::time::Duration::from_millis(200);

/// The next capture event, or never when capture is off.
async fn next_capture(
    packets: &mut Option<UnboundedReceiver<CaptureEvent>>,
) -> Option<CaptureEvent> {
    match packets {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

async fn next_sample(
    samples: &mut Option<UnboundedReceiver<SamplerEvent>>,
) -> Option<SamplerEvent> {
    next_of(samples).await
}

/// The next item of a channel, or never when there is none.
async fn next_of<T>(receiver: &mut Option<UnboundedReceiver<T>>) -> Option<T> {
    match receiver {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `due`, or never when None.
async fn wait_until(due: Option<std::time::Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due.into()).await,
        None => std::future::pending().await,
    }
}

enum Handled {
    /// Whether the screen must be redrawn.
    Changed(bool),
    /// Ctrl-Z: stop as a job.
    Suspend,
}

fn on_input(app: &mut App, input: Input) -> Handled {
    match input {
        // Raw mode turns off the terminal's own Ctrl-C and Ctrl-Z.
        Input::Key(Key::Ctrl('c')) => {
            app.quit = true;
            Handled::Changed(true)
        }
        Input::Key(key) if keymap::lookup(key).is_some_and(|b| b.action == Action::Suspend) => {
            Handled::Suspend
        }
        Input::Key(key) => {
            let acknowledged = app.acknowledge_notice();
            Handled::Changed(app.on_key(key) || acknowledged)
        }
        Input::Click(column, row) => Handled::Changed(app.on_click(column, row)),
    }
}

//! The one key table. Key handling looks actions up here and the help screen,
//! the footer hints and the man page's KEYS section are rendered from it, so
//! they cannot drift apart. Pure data: build.rs includes this file too.

/// A key, independent of the terminal library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    F(u8),
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    Enter,
    Esc,
    Tab,
    BackTab,
    Backspace,
    /// A letter with Ctrl held (never the letter itself).
    Ctrl(char),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    /// Clear the terminal and draw everything again.
    Repaint,
    /// Ctrl-Z: stop as a job (run.rs does it: it owns the terminal).
    Suspend,
    Help,
    NextTab,
    PrevTab,
    /// The tab is chosen by the digit pressed.
    GotoTab,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Close,
    SortNext,
    SortPrev,
    SortInvert,
    Filter,
    Pause,
    /// Load tab: edit the selected field of the form.
    Edit,
    /// Load tab: the next (Right) or previous (Left) kind of load.
    Choose,
    /// Load tab: start the run the form describes.
    Start,
    /// Load tab: stop the running load.
    Stop,
    /// Live view: start or stop recording to a file.
    Record,
    /// Live view: freeze the last minutes into an incident bundle.
    Freeze,
    /// Replay: slower (-) or faster (+), 0.25x-4096x.
    ReplaySpeed,
    /// Replay: one sample back (Left) or on (Right).
    ReplayStep,
    /// Replay: one minute back ([) or on (]).
    ReplayMinute,
    /// Replay: ask for a time and go there.
    ReplayJumpTo,
    /// Replay: the first (g) or last (G) sample.
    ReplayEnds,
    /// Replay: the previous ({) or next (}) sample where a finding starts.
    ReplayFinding,
    /// Flows: edit the capture filter (pcap-filter syntax).
    CaptureFilter,
    /// Flows: write the packet list to a pcap file.
    WritePcap,
    /// Flows: freeze the packet list or follow the newest packet again.
    Follow,
    ScrollPacketsUp,
    ScrollPacketsDown,
    /// Flows: one row per flow, per host or per port.
    Aggregate,
    /// DNS: type a probe to add (NAME, AAAA:NAME, an address for PTR).
    AddProbe,
    /// Open or close the findings list (Enter there: go to the evidence).
    Findings,
    /// Go to the related rows: an interface's flows, a socket's flow, a
    /// flow's process's sockets.
    Link,
    /// Flow screen: the next (v) or previous (V) sub-view.
    SubView,
    /// Flow screen: write this flow's packets to a pcap file.
    ExportFlow,
    /// Trace the flow through the nftables rules, or stop.
    TraceRules,
    /// Jump to the next row containing the typed text (htop's F3).
    Search,
    /// Sockets: group the sockets under their owning process.
    Tree,
    /// Sockets: destroy the selected TCP socket (ss -K), after a y/N.
    KillSocket,
    /// Sockets: switch between the open sockets and the closed connections.
    ToggleClosed,
    /// The setup screen: columns, thresholds, interval, theme.
    Setup,
    /// Setup: show or hide the selected column, or flip the theme.
    Toggle,
    /// Setup: move the selected column up (F7) or down (F8).
    MoveColumn,
    /// Setup: write the settings to the config file.
    Save,
    /// Drops: go to the socket of the selected drop site (Sockets tab).
    GoSocket,
    /// Drops: go to the interface of the selected drop site.
    GoInterface,
    /// Sockets, Flows: trace the path to the row's remote (the Path view).
    Trace,
    /// Names for addresses (reverse DNS) and ports (/etc/services), on/off.
    Names,
    /// Namespaces: scope every tab to the selected namespace.
    ScopeNamespace,
    /// Every namespace's rows again (the scope's end).
    ClearScope,
}

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Anywhere.
    Global,
    /// In a tab's table or detail pane.
    View,
    /// In the Load tab; these come before the View bindings there.
    Load,
    /// While replaying a recording; these come before the others.
    Replay,
    /// In the Flows tab.
    Flows,
    /// In the DNS tab.
    Dns,
    /// On one flow's screen (Enter on a flow, or on a socket with traffic).
    FlowDetail,
    /// In the Sockets tab.
    Sockets,
    /// On the setup screen (F2); its movement keys are the table's.
    Setup,
    /// In the Drops tab.
    Drops,
    /// In the Namespaces tab; these come before the View bindings there.
    Namespaces,
}

impl Scope {
    /// The heading of this scope's keys on the help screen.
    pub fn title(self) -> &'static str {
        match self {
            Scope::Global => "Anywhere",
            Scope::View => "In a table or detail",
            Scope::Load => "In the Load tab",
            Scope::Replay => "While replaying",
            Scope::Flows => "In Flows",
            Scope::Dns => "In DNS",
            Scope::FlowDetail => "On a flow's screen",
            Scope::Sockets => "In Sockets",
            Scope::Setup => "On the setup screen (F2)",
            Scope::Drops => "In Drops",
            Scope::Namespaces => "In NS (namespaces)",
        }
    }
}

/// Every scope, in the order the help screen lists them.
pub const SCOPES: &[Scope] = &[
    Scope::Global,
    Scope::View,
    Scope::Sockets,
    Scope::Flows,
    Scope::Dns,
    Scope::Drops,
    Scope::Namespaces,
    Scope::FlowDetail,
    Scope::Load,
    Scope::Replay,
    Scope::Setup,
];

mod bindings;
pub use bindings::BINDINGS;

pub struct Binding {
    pub keys: &'static [Key],
    pub action: Action,
    pub scope: Scope,
    /// One line for the help screen and the man page.
    pub help: &'static str,
    /// A short word for the footer, if the binding is worth a hint there.
    pub hint: Option<&'static str>,
}

use Key::*;

/// Keys while typing into a prompt (a filter, a load target, a DNS probe,
/// a replay time): `app::line_edit` handles them, help and the man page
/// list them from here.
pub const PROMPT_KEYS: &[(Key, &str)] = &[
    (Key::Backspace, "delete the last character"),
    (Key::Ctrl('u'), "clear the line"),
    (Key::Ctrl('w'), "delete the last word"),
    (Key::Enter, "apply"),
    (Key::Esc, "cancel"),
];

/// The setup screen's own binding for a key, if any.
pub fn lookup_setup(key: Key) -> Option<&'static Binding> {
    BINDINGS
        .iter()
        .filter(|b| b.scope == Scope::Setup)
        .find(|binding| binding.keys.contains(&key))
}

/// The binding for a key outside the Load and Namespaces tabs and
/// replay, if any.
pub fn lookup(key: Key) -> Option<&'static Binding> {
    lookup_in(key, Scope::View)
}

/// The binding for a key in a tab whose own keys are `tab`'s: in the Load
/// and Namespaces tabs their own bindings come first (their Enter is not
/// View's). Replay bindings are looked up apart, with `lookup_replay`.
pub fn lookup_in(key: Key, tab: Scope) -> Option<&'static Binding> {
    let matches = |binding: &&Binding| binding.keys.contains(&key);
    if matches!(tab, Scope::Load | Scope::Namespaces)
        && let Some(binding) = BINDINGS.iter().filter(|b| b.scope == tab).find(matches)
    {
        return Some(binding);
    }
    BINDINGS
        .iter()
        .filter(|b| {
            !matches!(
                b.scope,
                Scope::Load | Scope::Replay | Scope::Setup | Scope::Namespaces
            )
        })
        .find(matches)
}

/// The replay binding for a key, if any; while replaying these come first
/// (so g and G move in time; Home and End still move in the table).
pub fn lookup_replay(key: Key) -> Option<&'static Binding> {
    BINDINGS
        .iter()
        .filter(|b| b.scope == Scope::Replay)
        .find(|binding| binding.keys.contains(&key))
}

pub fn key_label(key: Key) -> String {
    match key {
        Char(' ') => "Space".into(),
        Char(c) => c.to_string(),
        F(n) => format!("F{n}"),
        Up => "Up".into(),
        Down => "Down".into(),
        Left => "←".into(),
        Right => "→".into(),
        PageUp => "PgUp".into(),
        PageDown => "PgDn".into(),
        Home => "Home".into(),
        End => "End".into(),
        Enter => "Enter".into(),
        Esc => "Esc".into(),
        Tab => "Tab".into(),
        BackTab => "Shift-Tab".into(),
        Backspace => "Backspace".into(),
        Ctrl(c) => format!("Ctrl-{}", c.to_ascii_uppercase()),
    }
}

/// The short form for the footer: the first key, or "1-9" for a digit run.
pub fn hint_label(keys: &[Key]) -> String {
    if keys.len() > 2 {
        return keys_label(keys);
    }
    keys.first().map(|k| key_label(*k)).unwrap_or_default()
}

/// "q F10", or "1-9" for a run of digits.
pub fn keys_label(keys: &[Key]) -> String {
    if keys.len() > 2
        && keys
            .iter()
            .all(|k| matches!(k, Char(c) if c.is_ascii_digit()))
    {
        return format!("{}-{}", key_label(keys[0]), key_label(keys[keys.len() - 1]));
    }
    keys.iter()
        .map(|k| key_label(*k))
        .collect::<Vec<_>>()
        .join(" ")
}

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

pub const BINDINGS: &[Binding] = &[
    Binding {
        keys: &[Char('q'), F(10)],
        action: Action::Quit,
        scope: Scope::Global,
        help: "quit",
        hint: Some("quit"),
    },
    Binding {
        keys: &[Char('?'), F(1)],
        action: Action::Help,
        scope: Scope::Global,
        help: "show or hide this help",
        hint: Some("help"),
    },
    Binding {
        keys: &[Tab],
        action: Action::NextTab,
        scope: Scope::Global,
        help: "next tab",
        hint: None,
    },
    Binding {
        keys: &[BackTab],
        action: Action::PrevTab,
        scope: Scope::Global,
        help: "previous tab",
        hint: None,
    },
    Binding {
        keys: &[
            Char('1'),
            Char('2'),
            Char('3'),
            Char('4'),
            Char('5'),
            Char('6'),
            Char('7'),
            Char('8'),
            Char('9'),
            Char('0'),
        ],
        action: Action::GotoTab,
        scope: Scope::Global,
        help: "go to tab 1-9, 0 the tenth (NS)",
        hint: Some("tab"),
    },
    Binding {
        keys: &[Char('p'), Char(' ')],
        action: Action::Pause,
        scope: Scope::Global,
        help: "pause/resume the display",
        hint: Some("pause"),
    },
    Binding {
        keys: &[Char('!')],
        action: Action::Findings,
        scope: Scope::Global,
        help: "findings; Enter: evidence",
        hint: Some("findings"),
    },
    Binding {
        keys: &[F(2)],
        action: Action::Setup,
        scope: Scope::Global,
        help: "setup: columns, thresholds",
        hint: Some("setup"),
    },
    Binding {
        keys: &[Char('R')],
        action: Action::Record,
        scope: Scope::Global,
        help: "start or stop recording",
        hint: None,
    },
    Binding {
        keys: &[Char('B')],
        action: Action::Freeze,
        scope: Scope::Global,
        help: "freeze 5m into a bundle",
        hint: None,
    },
    Binding {
        keys: &[Char('N')],
        action: Action::Names,
        scope: Scope::Global,
        help: "names for peers, ports",
        hint: None,
    },
    Binding {
        keys: &[Char('u')],
        action: Action::ClearScope,
        scope: Scope::Global,
        help: "unscope: every namespace's rows again (Esc too)",
        hint: None,
    },
    Binding {
        keys: &[Ctrl('l')],
        action: Action::Repaint,
        scope: Scope::Global,
        help: "redraw the whole screen",
        hint: None,
    },
    Binding {
        keys: &[Ctrl('z')],
        action: Action::Suspend,
        scope: Scope::Global,
        help: "suspend (fg resumes)",
        hint: None,
    },
    Binding {
        keys: &[Up, Char('k')],
        action: Action::Up,
        scope: Scope::View,
        help: "move up",
        hint: None,
    },
    Binding {
        keys: &[Down, Char('j')],
        action: Action::Down,
        scope: Scope::View,
        help: "move down",
        hint: None,
    },
    Binding {
        keys: &[PageUp],
        action: Action::PageUp,
        scope: Scope::View,
        help: "page up",
        hint: None,
    },
    Binding {
        keys: &[PageDown],
        action: Action::PageDown,
        scope: Scope::View,
        help: "page down",
        hint: None,
    },
    Binding {
        keys: &[Home, Char('g')],
        action: Action::Top,
        scope: Scope::View,
        help: "first row",
        hint: None,
    },
    Binding {
        keys: &[End, Char('G')],
        action: Action::Bottom,
        scope: Scope::View,
        help: "last row",
        hint: None,
    },
    Binding {
        keys: &[Enter],
        action: Action::Open,
        scope: Scope::View,
        help: "open the row's detail",
        hint: Some("detail"),
    },
    Binding {
        keys: &[Esc],
        action: Action::Close,
        scope: Scope::View,
        help: "close detail/help/filter",
        hint: None,
    },
    Binding {
        keys: &[Char('s'), F(6), Char('>')],
        action: Action::SortNext,
        scope: Scope::View,
        help: "sort by next column",
        hint: Some("sort"),
    },
    Binding {
        keys: &[Char('<')],
        action: Action::SortPrev,
        scope: Scope::View,
        help: "sort by previous column",
        hint: None,
    },
    Binding {
        keys: &[Char('I')],
        action: Action::SortInvert,
        scope: Scope::View,
        help: "invert the sort order",
        hint: None,
    },
    Binding {
        keys: &[Char('x')],
        action: Action::Link,
        scope: Scope::View,
        help: "jump to related rows",
        hint: None,
    },
    Binding {
        keys: &[Char('/'), F(4)],
        action: Action::Filter,
        scope: Scope::View,
        help: "filter rows: words or fields (port:443)",
        hint: Some("filter"),
    },
    Binding {
        keys: &[F(3)],
        action: Action::Search,
        scope: Scope::View,
        help: "search; F3 again: next match",
        hint: Some("search"),
    },
    Binding {
        keys: &[F(5)],
        action: Action::Tree,
        scope: Scope::Sockets,
        help: "tree: sockets under their process",
        hint: Some("tree"),
    },
    Binding {
        keys: &[Enter],
        action: Action::ScopeNamespace,
        scope: Scope::Namespaces,
        help: "scope every tab to this namespace (header: ns:NAME)",
        hint: Some("scope"),
    },
    Binding {
        keys: &[Char('o')],
        action: Action::GoSocket,
        scope: Scope::Drops,
        help: "go to the site's socket (Sockets, filtered on its port)",
        hint: Some("socket"),
    },
    Binding {
        keys: &[Char('i')],
        action: Action::GoInterface,
        scope: Scope::Drops,
        help: "go to the site's interface (Interfaces)",
        hint: Some("iface"),
    },
    Binding {
        keys: &[Char('c')],
        action: Action::ToggleClosed,
        scope: Scope::Sockets,
        help: "open sockets / closed connections (how each ended)",
        hint: Some("closed"),
    },
    Binding {
        // View scope: Sockets and Flows take it, the other tabs ignore it.
        // While replaying, `t` stays replay's "go to a time" (replay keys
        // come first), and a recording has no live path to probe.
        keys: &[Char('t')],
        action: Action::Trace,
        scope: Scope::View,
        help: "trace the path to its peer",
        hint: None,
    },
    Binding {
        keys: &[F(9)],
        action: Action::KillSocket,
        scope: Scope::Sockets,
        help: "kill the TCP socket (ss -K), y/N",
        hint: Some("kill"),
    },
    Binding {
        keys: &[Enter],
        action: Action::Edit,
        scope: Scope::Load,
        help: "edit the selected field",
        hint: Some("edit"),
    },
    Binding {
        keys: &[Right, Left],
        action: Action::Choose,
        scope: Scope::Load,
        help: "change the kind of load",
        hint: None,
    },
    Binding {
        keys: &[Char('r')],
        action: Action::Start,
        scope: Scope::Load,
        help: "run the load in the form",
        hint: Some("run"),
    },
    Binding {
        keys: &[Char('s'), Esc],
        action: Action::Stop,
        scope: Scope::Load,
        help: "stop the running load now",
        hint: Some("stop"),
    },
    Binding {
        keys: &[Char(' ')],
        action: Action::Pause,
        scope: Scope::Replay,
        help: "play or pause",
        hint: Some("play"),
    },
    Binding {
        keys: &[Left, Right],
        action: Action::ReplayStep,
        scope: Scope::Replay,
        help: "one sample back / on",
        hint: Some("step"),
    },
    Binding {
        keys: &[Char('['), Char(']')],
        action: Action::ReplayMinute,
        scope: Scope::Replay,
        help: "one minute back / on",
        hint: Some("1m"),
    },
    Binding {
        keys: &[Char('-'), Char('+')],
        action: Action::ReplaySpeed,
        scope: Scope::Replay,
        help: "slower/faster (0.25x-4096x)",
        hint: Some("speed"),
    },
    Binding {
        keys: &[Char('t')],
        action: Action::ReplayJumpTo,
        scope: Scope::Replay,
        help: "go to a time (14:05, -5m)",
        hint: Some("time"),
    },
    Binding {
        keys: &[Char('g'), Char('G')],
        action: Action::ReplayEnds,
        scope: Scope::Replay,
        help: "first/last sample",
        hint: None,
    },
    Binding {
        keys: &[Char('{'), Char('}')],
        action: Action::ReplayFinding,
        scope: Scope::Replay,
        help: "previous/next sample where a finding starts (! on the timeline)",
        hint: Some("finding"),
    },
    Binding {
        keys: &[Char('f')],
        action: Action::CaptureFilter,
        scope: Scope::Flows,
        help: "edit the capture filter",
        hint: None,
    },
    Binding {
        keys: &[Char('w')],
        action: Action::WritePcap,
        scope: Scope::Flows,
        help: "write packets to a pcap",
        hint: None,
    },
    Binding {
        keys: &[Char('F')],
        action: Action::Follow,
        scope: Scope::Flows,
        help: "freeze / follow packets",
        hint: None,
    },
    Binding {
        keys: &[Char('[')],
        action: Action::ScrollPacketsUp,
        scope: Scope::Flows,
        help: "scroll packets back",
        hint: None,
    },
    Binding {
        keys: &[Char(']')],
        action: Action::ScrollPacketsDown,
        scope: Scope::Flows,
        help: "scroll packets forward",
        hint: None,
    },
    Binding {
        keys: &[Char('a')],
        action: Action::Aggregate,
        scope: Scope::Flows,
        help: "flows by flow/host/port",
        hint: None,
    },
    Binding {
        keys: &[Char('n')],
        action: Action::AddProbe,
        scope: Scope::Dns,
        help: "add a DNS probe (A, AAAA or PTR)",
        hint: Some("probe"),
    },
    Binding {
        keys: &[Char('v'), Char('V')],
        action: Action::SubView,
        scope: Scope::FlowDetail,
        help: "next / previous sub-view",
        hint: Some("view"),
    },
    Binding {
        keys: &[Char('e')],
        action: Action::ExportFlow,
        scope: Scope::FlowDetail,
        help: "export this flow to a pcap",
        hint: Some("export"),
    },
    Binding {
        keys: &[Char(' '), Enter],
        action: Action::Toggle,
        scope: Scope::Setup,
        help: "show/hide a column; edit a value",
        hint: Some("toggle/edit"),
    },
    Binding {
        keys: &[F(7), F(8)],
        action: Action::MoveColumn,
        scope: Scope::Setup,
        help: "move the column up / down",
        hint: Some("move"),
    },
    Binding {
        keys: &[Char('w')],
        action: Action::Save,
        scope: Scope::Setup,
        help: "save to the config file",
        hint: Some("save"),
    },
    Binding {
        keys: &[Esc, F(2)],
        action: Action::Close,
        scope: Scope::Setup,
        help: "leave setup (changes stay live)",
        hint: Some("done"),
    },
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

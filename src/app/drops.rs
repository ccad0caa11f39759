//! The Drops tab's state and what it shows: the kernel's drops per reason
//! and site with their rates (from `findings::drops::site_rates`, the same
//! rates the `drop:` findings judge), each reason's rate over the history,
//! and the failure counters that moved. Enter opens a site's detail; `o`
//! and `i` go to its socket or interface.

use super::keymap::{Action, Key, Scope};
use super::links::Link;
use super::table::Window;
use super::view::{Reply, Shown, TabView};
use crate::findings::catalogue::{self, Reason};
use crate::findings::counters::{Moved, moved};
use crate::findings::drops::{firewall_attribution, site_rates};
use crate::model::Sample;
use crate::model::drops::owning_socket;
use crate::model::drops::{DropRow, DropSocket};

/// How many samples a reason's sparkline covers.
pub const SPARK_SAMPLES: usize = 30;

#[derive(Debug, Clone, Default)]
pub struct DropsView {
    /// The selected site (its count ignored: `DropRow::same_site`).
    pub selected: Option<DropRow>,
    /// Where the selection sat, for when its site goes away.
    pub selected_position: usize,
    pub window: Window,
    /// The selected site's detail is open (Enter; Esc closes it).
    pub detail: bool,
    /// A finding's reason to select at the next look (its evidence row).
    pub marked: Option<String>,
}

/// One row of the table: a drop site and its rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub row: DropRow,
    /// None when the catalogue lacks the reason (a newer kernel).
    pub reason: Option<&'static Reason>,
    pub per_s: Option<f64>,
    /// "udp:5353 (812/avahi-daemon)", or "udp:5353" without a process.
    pub socket: Option<String>,
    /// The reason's summed rate over the last samples, oldest first.
    pub spark: Vec<f64>,
}

/// What the tab shows for the shown sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub lines: Vec<Line>,
    /// Why reasons are not counted; the counters are still shown.
    pub unavailable: Option<String>,
    /// Rows from more than one namespace: the NETNS column is shown.
    pub many_netns: bool,
    /// The watched namespace's drops the kernel could not count (its map
    /// was full); every namespace's when the initial one is watched.
    pub lost: u64,
    /// The watched namespace's label, None for the initial one (whose
    /// view counts every namespace): whose drops `lost` are.
    pub lost_in: Option<String>,
    pub counters: Vec<Moved>,
    /// The firewall rules that dropped in the interval, busiest first,
    /// then the candidates for the drops no counted rule explains.
    pub rules: Vec<RuleLine>,
    /// NETFILTER_DROP drops per second no counted rule explains.
    pub unexplained_per_s: f64,
    /// Why the rules could not be read, when they were asked for.
    pub rules_unavailable: Option<String>,
}

/// A firewall rule that dropped (or may have: a candidate).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleLine {
    /// "inet filter input", "filter INPUT".
    pub place: String,
    /// "#4" (nf_tables' handle) or "3" (iptables' position), "policy".
    pub at: String,
    pub text: String,
    /// None for a candidate (no counter).
    pub per_s: Option<f64>,
}

impl RuleLine {
    fn of(rule: &crate::model::firewall::Rule, per_s: Option<f64>) -> Self {
        RuleLine {
            place: rule.place(),
            at: match (rule.policy, rule.handle) {
                (true, _) => "policy".into(),
                (false, Some(handle)) => format!("#{handle}"),
                (false, None) => rule.position.to_string(),
            },
            text: rule.text.clone(),
            per_s,
        }
    }
}

/// The tab's table for the shown sample: the drop sites and counters, and
/// the firewall rules (which count without the eBPF program too).
pub fn table(shown: &Shown) -> Table {
    let mut table = sites(shown);
    if let (previous, Some(current)) = shown.pair() {
        add_rules(&mut table, previous, current);
    }
    table
}

fn sites(shown: &Shown) -> Table {
    let (previous, current) = shown.pair();
    let Some(current) = current else {
        return Table::default();
    };
    let counters = moved(previous, current);
    let drops = match &current.drops {
        None => {
            return Table {
                unavailable: Some("none in this sample (recorded without them)".into()),
                counters,
                ..Table::default()
            };
        }
        Some(d) if d.unavailable.is_some() => {
            return Table {
                unavailable: d.unavailable.clone(),
                counters,
                ..Table::default()
            };
        }
        Some(d) => d,
    };
    let history = shown.same_netns();
    let recent = &history[history.len().saturating_sub(SPARK_SAMPLES + 1)..];
    let lines: Vec<Line> = site_rates(previous, current)
        .into_iter()
        .map(|site| Line {
            reason: catalogue::reason(&site.row.reason),
            per_s: site.per_s,
            socket: site.row.socket.as_ref().map(|s| socket_text(current, s)),
            spark: reason_series(recent, &site.row.reason, site.row.netns_inode),
            row: site.row.clone(),
        })
        .collect();
    let mut inodes: Vec<u64> = drops.rows.iter().map(|r| r.netns_inode).collect();
    inodes.sort_unstable();
    inodes.dedup();
    Table {
        lines,
        unavailable: None,
        many_netns: inodes.len() > 1,
        lost: drops.lost,
        lost_in: (current.netns != "host").then(|| current.netns.clone()),
        counters,
        ..Table::default()
    }
}

/// The firewall's part of the table: the rules that dropped, and the
/// candidates for what none of them counted.
fn add_rules(table: &mut Table, previous: Option<&Sample>, current: &Sample) {
    table.rules_unavailable = current
        .firewall
        .as_ref()
        .and_then(|f| f.unavailable.clone());
    let Some(rules) = firewall_attribution(previous, current) else {
        return;
    };
    table.unexplained_per_s = rules.unexplained_per_s;
    table.rules = rules
        .counted
        .iter()
        .map(|r| RuleLine::of(r.rule, Some(r.per_s)))
        .chain(rules.candidates.iter().map(|r| RuleLine::of(r, None)))
        .collect();
}

/// "udp:5353 (812/avahi-daemon)": the port and the process holding it, as
/// the column shows it.
fn socket_text(current: &Sample, socket: &DropSocket) -> String {
    let port = format!("{}:{}", socket.proto, socket.port);
    match owning_socket(&current.sockets, socket).and_then(|s| s.users.first()) {
        Some(user) => format!("{port} ({}/{})", user.pid, user.process),
        None => port,
    }
}

/// A reason's drops per second in one namespace in each interval of
/// `samples`, oldest first.
pub fn reason_series(samples: &[&Sample], reason: &str, netns_inode: u64) -> Vec<f64> {
    samples
        .windows(2)
        .map(|pair| {
            let current = pair[1];
            site_rates(Some(pair[0]), current)
                .iter()
                .filter(|s| s.row.reason == reason && s.row.netns_inode == netns_inode)
                .filter_map(|s| s.per_s)
                .sum()
        })
        .collect()
}

impl DropsView {
    /// Selects the busiest site of `reason` at the next look (a finding's
    /// evidence).
    pub fn mark_reason(&mut self, reason: &str) {
        self.marked = Some(reason.to_string());
        self.selected = None;
        self.detail = false;
    }

    /// The selected line's index in `lines`, resolving a mark or a site
    /// that went away, and remembering it.
    pub fn select_in(&mut self, lines: &[Line]) -> Option<usize> {
        if lines.is_empty() {
            return None;
        }
        if let Some(reason) = self.marked.take()
            && let Some(at) = lines.iter().position(|l| l.row.reason == reason)
        {
            self.selected = Some(lines[at].row.clone());
        }
        let at = self
            .selected
            .as_ref()
            .and_then(|s| lines.iter().position(|l| l.row.same_site(s)))
            .unwrap_or(self.selected_position.min(lines.len() - 1));
        self.selected = Some(lines[at].row.clone());
        self.selected_position = at;
        Some(at)
    }

    /// The selected line of the shown sample's table.
    pub fn selected_line(&mut self, shown: &Shown) -> Option<Line> {
        let table = table(shown);
        let at = self.select_in(&table.lines)?;
        table.lines.into_iter().nth(at)
    }
}

impl TabView for DropsView {
    fn scope(&self) -> Scope {
        Scope::Drops
    }

    fn on_action(&mut self, action: Action, _key: Key, shown: &Shown) -> Reply {
        let table = table(shown);
        let Some(at) = self.select_in(&table.lines) else {
            return Reply::Redraw(false);
        };
        let line = &table.lines[at];
        match action {
            Action::Open => self.detail = true,
            Action::Close if self.detail => self.detail = false,
            Action::GoSocket => {
                let (Some(socket), Some(current)) = (&line.row.socket, shown.current()) else {
                    return Reply::Redraw(false);
                };
                return Reply::Link(Link::Sockets {
                    selected: owning_socket(&current.sockets, socket).map(|s| s.key()),
                    filter: match socket.proto.as_str() {
                        "tcp" | "udp" if socket.port != 0 => {
                            format!("proto:{} sport:{}", socket.proto, socket.port)
                        }
                        proto => format!("{proto} :{}", socket.port),
                    },
                });
            }
            Action::GoInterface => {
                let Some(name) = &line.row.interface else {
                    return Reply::Redraw(false);
                };
                return Reply::Link(Link::Interface { name: name.clone() });
            }
            action => {
                let Some(to) = self.window.move_selection(action, at, table.lines.len()) else {
                    return Reply::Redraw(false);
                };
                self.selected = Some(table.lines[to].row.clone());
                self.selected_position = to;
            }
        }
        Reply::Redraw(true)
    }

    fn click_row(&mut self, index: usize, shown: &Shown) -> bool {
        let table = table(shown);
        let Some(line) = table.lines.get(index) else {
            return false;
        };
        self.selected = Some(line.row.clone());
        self.selected_position = index;
        true
    }
}

//! F9 in Sockets: kill the selected TCP socket as `ss -K` does, after a
//! y/N question naming it and its process. Also where the htop keys (F2,
//! F3, F5, F9) and their prompts get the keys first.

use super::App;
use super::keymap::{self, Action, Key};
use super::tabs::Tab;
use crate::model::sockets::{Proto, SocketSample};

/// The socket F9 asks about, as it was when F9 was pressed.
#[derive(Debug, Clone)]
pub struct KillPrompt {
    pub socket: SocketSample,
    /// "Kill 198.18.0.1:5201 ↔ 198.18.0.2:40001 (iperf3, pid 123)?"
    pub question: String,
}

/// "198.18.0.1:5201 ↔ 198.18.0.2:40001 (iperf3, pid 123)".
pub fn describe(socket: &SocketSample) -> String {
    let owner = match socket.users.first() {
        Some(user) => format!(" ({}, pid {})", user.process, user.pid),
        None => String::new(),
    };
    format!(
        "{} ↔ {}{owner}",
        socket.local,
        crate::ui::sockets::peer_text(socket)
    )
}

impl App {
    /// The keys the setup screen, the y/N question and the search prompt
    /// take before anything else, and the htop keys' own actions. None:
    /// not one of those; on_key goes on as usual.
    pub fn htop_key(&mut self, key: Key) -> Option<bool> {
        if self.setup.is_some() {
            return Some(self.setup_key(key));
        }
        if self.kill.is_some() {
            return Some(self.answer_kill(key));
        }
        // Any key clears the last kill's or save's outcome.
        let had_status = self.status.take().is_some();
        if self.search.editing {
            if let Some(redraw) = self.search_key(key) {
                return Some(redraw);
            }
            // The key ended the search: handled as usual, and the prompt's
            // line goes, so redraw.
            self.on_key(key);
            return Some(true);
        }
        let blocked = self.help
            || self.findings_list.is_some()
            || self.time_prompt.is_some()
            || self.editing_filter().is_some()
            || self.flows.capture_edit.is_some()
            || self.dns.prompt.is_some()
            || (self.tab == Tab::Load && self.load.modal());
        let action = keymap::lookup_in(key, self.tab == Tab::Load)
            .map(|b| b.action)
            .filter(|_| !blocked);
        let in_table = !self.flow_detail_shown() && self.tab != Tab::Load;
        let sockets_table = in_table && self.tab == Tab::Sockets && !self.sockets.detail;
        match action {
            Some(Action::Setup) => self.open_setup(),
            Some(Action::Search) if in_table => self.start_search(),
            Some(Action::Tree) if sockets_table => self.sockets.tree = !self.sockets.tree,
            Some(Action::KillSocket) if sockets_table => self.ask_kill(),
            _ if had_status => {
                // Handled as usual (the notice is gone now), then redrawn.
                self.on_key(key);
            }
            _ => return None,
        }
        Some(true)
    }

    /// F9: asks about the selected socket (or says why it cannot).
    fn ask_kill(&mut self) {
        if self.replay.is_some() {
            self.status = Some("replaying a recording: there is no live socket to kill".into());
            return;
        }
        let current = self.shown_index().and_then(|i| self.history.get(i));
        let Some(socket) = current.and_then(|c| self.sockets.selection(c).cloned()) else {
            self.status = Some("no socket selected".into());
            return;
        };
        if socket.proto != Proto::Tcp {
            self.status = Some("only TCP sockets can be killed (ss -K)".into());
            return;
        }
        let question = format!("Kill {}?", describe(&socket));
        self.kill = Some(KillPrompt { socket, question });
    }

    /// y kills; any other key (N, Esc) leaves the socket alone.
    fn answer_kill(&mut self, key: Key) -> bool {
        let Some(prompt) = self.kill.take() else {
            return false;
        };
        if !matches!(key, Key::Char('y' | 'Y')) {
            self.status = Some("not killed".into());
            return true;
        }
        let netns = self.load.netns.as_ref().map(|(file, _)| file.as_ref());
        let what = describe(&prompt.socket);
        self.status = Some(
            match crate::collect::sock_destroy::destroy(&prompt.socket, netns) {
                Ok(()) => format!("killed {what}"),
                Err(why) => format!("cannot kill {what}: {why}"),
            },
        );
        true
    }
}

//! F9 in Sockets: kill the selected TCP socket as `ss -K` does, after a
//! y/N question naming it and its process. Without root (a setcap'd
//! netlens), only the user's own sockets.

use super::App;
use super::keymap::Key;
use super::overlay::Overlay;
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
        socket.as_socket().peer_text()
    )
}

impl App {
    /// F9: asks about the selected socket (or says why it cannot).
    pub(super) fn ask_kill(&mut self, selected: Option<SocketSample>) {
        if self.replay.is_some() {
            self.status = Some("replaying a recording: there is no live socket to kill".into());
            return;
        }
        let Some(socket) = selected else {
            self.status = Some("no socket selected".into());
            return;
        };
        if socket.proto != Proto::Tcp {
            self.status = Some("only TCP sockets can be killed (ss -K)".into());
            return;
        }
        // Refused before asking; destroy checks again against the kernel.
        let caller = crate::collect::sock_destroy::real_uid();
        if let Err(why) = crate::collect::sock_destroy::may_kill(socket.uid, caller) {
            self.status = Some(format!("cannot kill {}: {why}", describe(&socket)));
            return;
        }
        let question = format!("Kill {}?", describe(&socket));
        self.overlays
            .push(Overlay::Kill(KillPrompt { socket, question }));
    }

    /// y kills; any other key (N, Esc) leaves the socket alone.
    pub(super) fn answer_kill(&mut self, prompt: KillPrompt, key: Key) {
        if !matches!(key, Key::Char('y' | 'Y')) {
            self.status = Some("not killed".into());
            return;
        }
        let netns = self.load.netns.as_ref().map(|(file, _)| file.as_ref());
        let what = describe(&prompt.socket);
        self.status = Some(
            match crate::collect::sock_destroy::destroy(&prompt.socket, netns) {
                Ok(()) => format!("killed {what}"),
                Err(why) => format!("cannot kill {what}: {why}"),
            },
        );
    }
}

//! A small synchronous rtnetlink client: one request, one dump, parsed.
//! Blocking by design: it runs on the sampler thread, never in the executor.

use anyhow::{Context, Result, bail};
use netlink_packet_core::{
    NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload,
};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_ROUTE};

const NLMSG_DONE: u16 = 3;
const NLMSG_ERROR: u16 = 2;

pub struct Rtnl {
    socket: Socket,
    sequence: u32,
    buffer: Vec<u8>,
}

impl Rtnl {
    /// Opens a route socket in the calling thread's network namespace.
    pub fn new() -> Result<Self> {
        let mut socket =
            Socket::new(NETLINK_ROUTE).context("cannot open a netlink route socket")?;
        socket
            .bind_auto()
            .context("cannot bind the netlink route socket")?;
        socket
            .connect(&SocketAddr::new(0, 0))
            .context("cannot connect the netlink route socket")?;
        Ok(Self {
            socket,
            sequence: 0,
            // The kernel sends dump batches of up to 32 KiB; leave headroom.
            buffer: vec![0; 256 * 1024],
        })
    }

    /// Sends one request (a change: add, delete) and waits for its
    /// acknowledgement; a netlink error is the error.
    pub fn request(&mut self, request: RouteNetlinkMessage) -> Result<()> {
        self.sequence = self.sequence.wrapping_add(1);
        let mut packet =
            NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(request));
        packet.header.flags = NLM_F_REQUEST | NLM_F_ACK;
        packet.header.sequence_number = self.sequence;
        packet.finalize();
        let mut out = vec![0; packet.buffer_len()];
        packet.serialize(&mut out);
        self.socket.send(&out, 0).context("netlink send failed")?;
        loop {
            let size = self
                .socket
                .recv(&mut &mut self.buffer[..], 0)
                .context("netlink receive failed")?;
            let Ok(message) =
                NetlinkMessage::<RouteNetlinkMessage>::deserialize(&self.buffer[..size])
            else {
                bail!("malformed netlink acknowledgement");
            };
            if message.header.sequence_number != self.sequence {
                continue;
            }
            return match message.payload {
                NetlinkPayload::Error(error) => match error.code {
                    Some(code) => Err(std::io::Error::from_raw_os_error(-code.get()).into()),
                    None => Ok(()),
                },
                _ => Ok(()),
            };
        }
    }

    /// Sends a dump request and returns every reply message that parsed.
    /// A message this crate version cannot parse is skipped, not fatal: a
    /// newer kernel attribute must not blank the whole screen.
    pub fn dump(&mut self, request: RouteNetlinkMessage) -> Result<Vec<RouteNetlinkMessage>> {
        Ok(self.dump_at_most(request, usize::MAX)?.0)
    }

    /// As [`Rtnl::dump`], keeping at most `max` replies (a router's full
    /// table holds a million routes); the rest are read and dropped, so the
    /// socket stays in step. True when some were dropped.
    pub fn dump_at_most(
        &mut self,
        request: RouteNetlinkMessage,
        max: usize,
    ) -> Result<(Vec<RouteNetlinkMessage>, bool)> {
        self.sequence = self.sequence.wrapping_add(1);
        let mut packet =
            NetlinkMessage::new(NetlinkHeader::default(), NetlinkPayload::from(request));
        packet.header.flags = NLM_F_DUMP | NLM_F_REQUEST;
        packet.header.sequence_number = self.sequence;
        packet.finalize();
        let mut out = vec![0; packet.buffer_len()];
        packet.serialize(&mut out);
        self.socket.send(&out, 0).context("netlink send failed")?;

        let (mut replies, mut truncated) = (Vec::new(), false);
        loop {
            let size = self
                .socket
                .recv(&mut &mut self.buffer[..], 0)
                .context("netlink receive failed")?;
            let mut offset = 0;
            while offset + 16 <= size {
                let bytes = &self.buffer[offset..size];
                let length = u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
                if length < 16 || length > bytes.len() {
                    bail!("malformed netlink reply (length {length})");
                }
                let sequence = u32::from_ne_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
                let message_type = u16::from_ne_bytes([bytes[4], bytes[5]]);
                offset += (length + 3) & !3;
                if sequence != self.sequence {
                    continue; // a late reply to an earlier request
                }
                if message_type == NLMSG_DONE {
                    return Ok((replies, truncated));
                }
                if replies.len() >= max && message_type != NLMSG_ERROR {
                    truncated = true;
                    continue;
                }
                match NetlinkMessage::<RouteNetlinkMessage>::deserialize(&bytes[..length]) {
                    Ok(message) => match message.payload {
                        NetlinkPayload::Done(_) => return Ok((replies, truncated)),
                        NetlinkPayload::Error(error) => {
                            if let Some(code) = error.code {
                                bail!(
                                    "netlink error: {}",
                                    std::io::Error::from_raw_os_error(-code.get())
                                );
                            }
                        }
                        NetlinkPayload::InnerMessage(inner) => replies.push(inner),
                        _ => {}
                    },
                    Err(_) => continue,
                }
            }
        }
    }
}

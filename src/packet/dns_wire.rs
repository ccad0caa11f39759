//! DNS messages on the wire, through hickory-proto (no resolver, no system
//! configuration: only bytes in and out).

use crate::model::dns::MAX_ANSWERS;
use hickory_proto::op::{Message, MessageType, OpCode, Query};
use hickory_proto::rr::{Name, RecordType};

/// One parsed message: what matching and results need.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub id: u16,
    pub response: bool,
    /// The first question's name (lowercase, no trailing dot) and type.
    pub name: String,
    pub qtype: String,
    pub rcode: u16,
    pub answers: Vec<String>,
}

/// A recursive query for `name` of type `qtype` (RFC 1035 code) with this id.
pub fn build_query(id: u16, name: &str, qtype: u16) -> Result<Vec<u8>, String> {
    let name = Name::from_ascii(format!("{name}.")).map_err(|e| format!("'{name}': {e}"))?;
    let mut message = Message::new(id, MessageType::Query, OpCode::Query);
    message.metadata.recursion_desired = true;
    message.add_query(Query::query(name, RecordType::from(qtype)));
    message
        .to_vec()
        .map_err(|e| format!("cannot encode the query: {e}"))
}

/// Parses a message; None when it is not DNS or has no question.
pub fn parse(bytes: &[u8]) -> Option<Parsed> {
    let message = Message::from_vec(bytes).ok()?;
    let query = message.queries.first()?;
    let name = query.name().to_ascii();
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    Some(Parsed {
        id: message.metadata.id,
        response: message.metadata.message_type == MessageType::Response,
        name: if name.is_empty() { ".".into() } else { name },
        qtype: query.query_type().to_string(),
        rcode: u16::from(message.metadata.response_code),
        answers: message
            .answers
            .iter()
            .take(MAX_ANSWERS)
            .map(|record| record.data.to_string())
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_round_trips() {
        let bytes = build_query(4242, "host.example.test", 28).unwrap();
        let parsed = parse(&bytes).unwrap();
        assert_eq!(parsed.id, 4242);
        assert!(!parsed.response);
        assert_eq!(parsed.name, "host.example.test");
        assert_eq!(parsed.qtype, "AAAA");
        assert_eq!(parse(&bytes[..5]), None);
    }
}

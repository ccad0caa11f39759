//! The watched namespace's main routing table from an RTM_GETROUTE dump
//! per family, summarized (`model::routes`): its size, its default route
//! and IPv6's unreachable and prohibit routes. A router's full table is read up to
//! MAX_ROUTES a family, and then only once a minute.

use super::rtnl::Rtnl;
use crate::model::routes::{FamilyRoutes, MAX_REJECTS, RoutesSample};
use anyhow::Result;
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteType,
};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Routes kept from one family's dump; more are read and dropped.
const MAX_ROUTES: usize = 10_000;
/// How long a truncated summary is kept before the table is read again.
const BIG_TABLE_EVERY: Duration = Duration::from_secs(60);

#[derive(Default)]
pub struct RoutesCollector {
    /// The last summary of a table too big to read every tick, and when.
    big: Option<(RoutesSample, Instant)>,
}

impl RoutesCollector {
    /// `names` are the interfaces' by index.
    pub fn collect(
        &mut self,
        rtnl: &mut Rtnl,
        names: &HashMap<u32, String>,
    ) -> Result<RoutesSample> {
        if let Some((sample, at)) = &self.big
            && at.elapsed() < BIG_TABLE_EVERY
        {
            return Ok(sample.clone());
        }
        let mut sample = RoutesSample::default();
        for (family, label) in [
            (AddressFamily::Inet, "inet"),
            (AddressFamily::Inet6, "inet6"),
        ] {
            let mut request = RouteMessage::default();
            request.header.address_family = family;
            let (replies, truncated) =
                rtnl.dump_at_most(RouteNetlinkMessage::GetRoute(request), MAX_ROUTES)?;
            sample.truncated |= truncated;
            let mut table = FamilyRoutes {
                family: label.to_string(),
                ..Default::default()
            };
            for reply in replies {
                let RouteNetlinkMessage::NewRoute(route) = reply else {
                    continue;
                };
                if route.header.table != RouteHeader::RT_TABLE_MAIN {
                    continue;
                }
                table.routes += 1;
                let rejects = matches!(
                    route.header.kind,
                    RouteType::Unreachable | RouteType::Prohibit
                );
                if route.header.destination_prefix_length == 0 && !rejects {
                    table
                        .default
                        .get_or_insert_with(|| route_text(&route, names));
                } else if rejects
                    && family == AddressFamily::Inet6
                    && table.rejects.len() < MAX_REJECTS
                {
                    table.rejects.push(route_text(&route, names));
                }
            }
            sample.families.push(table);
        }
        self.big = sample.truncated.then(|| (sample.clone(), Instant::now()));
        Ok(sample)
    }
}

/// A route as `ip route` prints it: "default via 198.18.0.254 dev eth0",
/// "unreachable 198.18.99.0/24", "198.18.0.0/24 dev eth0".
pub fn route_text(route: &RouteMessage, names: &HashMap<u32, String>) -> String {
    let address = |a: &RouteAddress| match a {
        RouteAddress::Inet(ip) => ip.to_string(),
        RouteAddress::Inet6(ip) => ip.to_string(),
        other => format!("{other:?}"),
    };
    let mut words = Vec::new();
    match route.header.kind {
        RouteType::Unreachable => words.push("unreachable".to_string()),
        RouteType::Prohibit => words.push("prohibit".to_string()),
        RouteType::BlackHole => words.push("blackhole".to_string()),
        RouteType::Throw => words.push("throw".to_string()),
        _ => {}
    }
    let destination = route.attributes.iter().find_map(|a| match a {
        RouteAttribute::Destination(d) => Some(address(d)),
        _ => None,
    });
    words.push(match destination {
        Some(d) if route.header.destination_prefix_length > 0 => {
            format!("{d}/{}", route.header.destination_prefix_length)
        }
        _ => "default".to_string(),
    });
    // Gateway, then device, whatever order the attributes came in.
    for attribute in &route.attributes {
        if let RouteAttribute::Gateway(g) = attribute {
            words.push(format!("via {}", address(g)));
        }
    }
    for attribute in &route.attributes {
        if let RouteAttribute::Oif(index) = attribute {
            let name = names.get(index).map_or_else(
                || format!("if{index}"),
                |n| crate::text::escape_control(n).into_owned(),
            );
            words.push(format!("dev {name}"));
        }
    }
    words.join(" ")
}

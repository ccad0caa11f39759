//! The watched namespace's main routing table, summarized for what
//! explains packets dropped for want of a route (Ip.OutNoRoutes,
//! Ip6.OutNoRoutes): whether it has a default route, and for IPv6 the
//! unreachable and prohibit routes, whose matches IPv6 counts as no route
//! too (IPv4 answers them EHOSTUNREACH and EACCES, counted elsewhere), as
//! `ip route` prints them.

use super::shared::Shared;
use serde::{Deserialize, Serialize};

/// IPv6 rejecting routes kept.
pub const MAX_REJECTS: usize = 4;

/// One tick's summary of table main.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RoutesSample {
    pub families: Shared<Vec<FamilyRoutes>>,
    /// The dump held more routes than netlens reads (a router's full
    /// table): the summary covers the first ones.
    pub truncated: bool,
}

/// One family's part of table main.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FamilyRoutes {
    /// "inet" or "inet6", as `ip -4/-6 route` calls them.
    pub family: String,
    pub routes: u64,
    /// "default via 198.18.0.254 dev eth0"; None when there is none.
    pub default: Option<String>,
    /// IPv6's "unreachable 2001:db8::/64" and "prohibit ...", at most
    /// MAX_REJECTS (none for IPv4).
    pub rejects: Vec<String>,
}

impl RoutesSample {
    /// What the table says about packets of `family` dropped for no
    /// route, for a finding's fix: "; here table main (3 routes) has no
    /// default route: ...". Nothing when the family was not read.
    pub fn explain(&self, family: &str) -> String {
        let Some(table) = self.families.iter().find(|f| f.family == family) else {
            return String::new();
        };
        let size = format!(
            "{}{} route{}",
            if self.truncated { "over " } else { "" },
            table.routes,
            if table.routes == 1 { "" } else { "s" }
        );
        let rejects = if table.rejects.is_empty() {
            String::new()
        } else {
            format!(
                "; its unreachable and prohibit routes count what they match as no route \
                 too: {}",
                table.rejects.join(", ")
            )
        };
        match &table.default {
            None => format!(
                "; here table main ({size}) has no default route: every destination outside \
                 its routes has none (`ip route add default via GATEWAY`){rejects}"
            ),
            Some(default) if rejects.is_empty() => format!(
                "; here table main ({size}) has a default route ({default}): the packets \
                 without one met a policy rule (`ip rule`) or another table"
            ),
            Some(default) => format!("; here table main ({size}): {default}{rejects}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(default: Option<&str>, rejects: &[&str]) -> RoutesSample {
        RoutesSample {
            families: vec![FamilyRoutes {
                family: "inet".into(),
                routes: 3,
                default: default.map(String::from),
                rejects: rejects.iter().map(|r| r.to_string()).collect(),
            }]
            .into(),
            truncated: false,
        }
    }

    #[test]
    fn the_table_names_what_drops_packets_for_no_route() {
        assert_eq!(
            table(None, &[]).explain("inet"),
            "; here table main (3 routes) has no default route: every destination outside its \
             routes has none (`ip route add default via GATEWAY`)"
        );
        let both = table(
            Some("default via fe80::1 dev v0"),
            &["unreachable 2001:db8::/64"],
        );
        assert_eq!(
            both.explain("inet"),
            "; here table main (3 routes): default via fe80::1 dev v0; its unreachable and \
             prohibit routes count what they match as no route too: unreachable 2001:db8::/64"
        );
        assert!(
            table(Some("default dev v0"), &[])
                .explain("inet")
                .contains("met a policy rule")
        );
        assert_eq!(both.explain("inet6"), "");
    }
}

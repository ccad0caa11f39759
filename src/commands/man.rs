//! `netlens man`: the manual page, as roff, on stdout.

pub fn run() -> anyhow::Result<()> {
    super::stdout::print(crate::manual::MAN_PAGE)
}

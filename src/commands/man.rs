//! `netlens man`: the manual page, as roff, on stdout.

pub fn run() -> anyhow::Result<()> {
    print!("{}", crate::manual::MAN_PAGE);
    Ok(())
}

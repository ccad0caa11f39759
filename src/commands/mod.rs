//! One module per subcommand.

pub mod explain;

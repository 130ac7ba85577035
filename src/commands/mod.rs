//! One module per subcommand that is not a whole stage of its own. Each renders into a `Write`.

pub mod changes;
pub mod check;
pub mod export;
pub mod import;
pub mod mcp;
pub mod query;
pub mod ship;
pub mod source;
pub mod sql;
pub mod timeline;

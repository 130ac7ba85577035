//! Checks: pure functions over plain data. So far, the parser of the
//! scheduler's failure message that the `scheduling` check will build on.

pub mod scheduling_message;

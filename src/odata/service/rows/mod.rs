//! A page's statements run and their rows written as OData JSON as they
//! arrive (`read`): each engine's row read through one [`Cells`] trait
//! (`cells`), handed to a [`Sink`] that writes it into the body, keeps it
//! open for expansions or counts it (`sinks`), each value written as OData
//! JSON writes it (`values`, `number`, `prefix`), a `concat`'s rows by their
//! branch (`branches`).

mod branches;
mod cells;
mod number;
mod prefix;
mod read;
mod sinks;
mod values;

pub use crate::odata::plan::ctx::Numbers;
pub use cells::Cells;
pub use read::run;
pub(crate) use read::{run_page, scalar};
pub use sinks::{BodySink, Layout, Sink};
pub(crate) use sinks::{CountSink, Entity, EntitySink, VALUE_OPEN};
pub(crate) use values::write_str;
pub use values::Cell;

//! Server-rendered screens (Tera + Fluent, en and de). Each works without
//! JavaScript: forms post to the `/auth/*` endpoints, which answer a form post
//! with a 303 to the next screen and leave their message in the session's
//! one-time flash. `/gatehouse/app.js` upgrades the forms to JSON calls.

mod assets;
mod page;
mod posted;
mod render;
mod screen;
mod when;

pub use assets::{asset, Asset, SCRIPT, STYLESHEET};
pub use page::Page;
pub use posted::Posted;
pub use render::{Screens, View};
pub use screen::Screen;
#[cfg(test)]
pub(crate) use screen::path_matches;

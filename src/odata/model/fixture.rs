//! The model the OData unit tests share: users in organisations, writing posts.

use crate::odata::model::sets::{EdmType, EntitySet, Model, Navigation, Property};

/// Users (every EDM type), Organisations (self-referencing, not searchable)
/// and Posts.
pub(crate) fn model() -> Model {
    use EdmType::*;
    let users = EntitySet::new("Users", "users", "id")
        .property(Property::new("id", Int64).not_null())
        .property(
            Property::new("name", String)
                .column("display_name")
                .not_null(),
        )
        .property(Property::new("email", String))
        .property(Property::new("age", Int32))
        .property(Property::new("rank", Int16).not_null())
        .property(Property::new("score", Decimal))
        .property(Property::new("weight", Double))
        .property(Property::new("active", Boolean).not_null())
        .property(Property::new("born", Date))
        .property(Property::new("created", DateTimeOffset).not_null())
        .property(Property::new("wakes", TimeOfDay))
        .property(Property::new("token", Guid))
        .navigation(Navigation::to_one(
            "organisation",
            "Organisations",
            "org_id",
        ))
        .navigation(Navigation::to_many("posts", "Posts", "author_id"))
        .searchable(&["name", "email"]);
    let orgs = EntitySet::new("Organisations", "orgs", "id")
        .property(Property::new("id", Int64).not_null())
        .property(Property::new("name", String))
        .navigation(Navigation::to_many("users", "Users", "org_id"))
        .navigation(Navigation::to_one("parent", "Organisations", "parent_id"));
    let posts = EntitySet::new("Posts", "posts", "id")
        .property(Property::new("id", Int64).not_null())
        .property(Property::new("title", String).not_null())
        .property(Property::new("likes", Int32).not_null())
        .navigation(Navigation::to_one("author", "Users", "author_id"))
        .public(true);
    Model::new().set(users).set(orgs).set(posts)
}

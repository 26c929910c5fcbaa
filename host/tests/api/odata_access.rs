//! Who may read what: guests get 401 (in the OData error shape) except on
//! public sets; a personal access token or a session cookie signs a caller
//! in; the reference host's `Users` and `Organisations` are scoped to the
//! caller's organisation, and another organisation's rows stay unreachable
//! through `$filter`, key lookups, navigation routes, `$count`, `$expand`
//! and `$search` — also from a set without a scope of its own. `Users`
//! never exposes a password hash or remember token.

use gatehouse::domain::SecretToken;
use rocket::figment::providers::{Format, Toml};
use rocket::http::Status;

use crate::helpers::{spawn_app, spawn_app_with, TestApp, PASSWORD};
use crate::odata_fixture::{ids, keys_of, odata_uri, spawn_fixture, spawn_fixture_with, Answer};

/// A set of the host's own configuration over `organisations`, without a
/// scope, whose `people` lead into the scoped `Users`.
const TEAMS: &str = r#"
[odata.sets.Teams]
table = "organisations"
navigation = { people = { target = "Users", remote_column = "organisation_id" } }
"#;

/// Two organisations with their members, and someone in none.
struct World {
    app: TestApp,
    alpha: i64,
    beta: i64,
    alice: i64,
    carol: i64,
    bob: i64,
    dave: i64,
}

impl TestApp {
    /// Creates a user called `name`, a member of `organisation` if given.
    async fn member(&self, email: &str, name: &str, organisation: Option<i64>) -> i64 {
        let id = self.create_user(email, PASSWORD).await;
        self.execute(
            self.db
                .query("UPDATE users SET name = $1 WHERE id = $2")
                .bind(name.to_owned())
                .bind(id),
        )
        .await;
        if let Some(org) = organisation {
            self.execute(
                self.db
                    .query(
                        "INSERT INTO organisation_user (organisation_id, user_id) VALUES ($1, $2)",
                    )
                    .bind(org)
                    .bind(id),
            )
            .await;
        }
        id
    }

    /// A new personal access token of `user_id`.
    async fn token_for(&self, user_id: i64) -> String {
        let token = SecretToken::generate();
        gatehouse::auth::tokens::create(&self.db, user_id, "odata tests", &token)
            .await
            .expect("create token");
        token.expose().to_owned()
    }

    /// `GET /odata/<resource>?<options>` with a bearer token.
    async fn odata_as(&self, token: &str, resource: &str, options: &[(&str, &str)]) -> Answer {
        let bearer = format!("Bearer {token}");
        self.get_uri(
            &odata_uri(resource, options),
            &[("Authorization", bearer.as_str())],
        )
        .await
    }
}

async fn world() -> World {
    let app = spawn_app_with(|f| f.merge(Toml::string(TEAMS))).await;
    let alpha = app.organisation("Alpha").await;
    let beta = app.organisation("Beta").await;
    let alice = app
        .member("alice@alpha.example", "Alice Alpha", Some(alpha))
        .await;
    let carol = app
        .member("carol@alpha.example", "Carol Alpha", Some(alpha))
        .await;
    let bob = app.member("bob@beta.example", "Bob Beta", Some(beta)).await;
    let dave = app
        .member("dave@nowhere.example", "Dave Nowhere", None)
        .await;
    World {
        app,
        alpha,
        beta,
        alice,
        carol,
        bob,
        dave,
    }
}

#[rocket::async_test]
async fn guests_get_401_in_the_odata_shape() {
    let app = spawn_app().await;
    for target in [
        "Users",
        "Users(1)",
        "Users(1",
        "Users()",
        "Users/$count",
        "Organisations",
        "Organisations(1)/members",
        "",
        "$metadata",
    ] {
        app.odata(target)
            .await
            .assert_error(Status::Unauthorized, None);
    }
}

#[rocket::async_test]
async fn a_bad_bearer_token_is_401() {
    let w = world().await;
    let app = &w.app;
    for authorization in [
        "Bearer not-a-token",
        "Bearer ",
        "Bearer",
        "Basic YWxpY2U6c2VjcmV0",
        "bearer-ish token",
    ] {
        app.get_uri(
            &odata_uri("Users", &[]),
            &[("Authorization", authorization)],
        )
        .await
        .assert_error(Status::Unauthorized, None);
    }
    let token = app.token_for(w.alice).await;
    let tampered = format!("{token}x");
    app.odata_as(&tampered, "Users", &[])
        .await
        .assert_error(Status::Unauthorized, None);
    app.odata_as(&token, "Users", &[]).await.ok();
}

#[rocket::async_test]
async fn public_sets_are_readable_by_guests_and_only_they_are_listed() {
    let app = spawn_fixture().await;
    app.odata("Things").await.ok();
    app.odata("Categories(1)/items").await.ok();
    app.odata("Users")
        .await
        .assert_error(Status::Unauthorized, None);
    let doc = app.odata("").await.json();
    let names: Vec<&str> = doc["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"Users") && !names.contains(&"Organisations"),
        "{names:?}"
    );
    let metadata = app.odata("$metadata").await;
    metadata.ok();
    assert!(!metadata.body.contains("Users"), "{}", metadata.body);
    assert!(
        !metadata.body.contains("Organisations"),
        "{}",
        metadata.body
    );
}

#[rocket::async_test]
async fn signed_in_callers_see_the_sets_they_may_read() {
    let w = world().await;
    let token = w.app.token_for(w.alice).await;
    let doc = w.app.odata_as(&token, "", &[]).await.json();
    let mut names: Vec<&str> = doc["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "Employees",
            "Organisations",
            "SecurityEvents",
            "Teams",
            "Users"
        ]
    );
    let metadata = w.app.odata_as(&token, "$metadata", &[]).await;
    assert!(metadata.ok().body.contains(r#"<EntitySet Name="Users""#));
}

#[rocket::async_test]
async fn a_bearer_token_reads_the_callers_organisation_only() {
    let w = world().await;
    let token = w.app.token_for(w.alice).await;
    let users = w.app.odata_as(&token, "Users", &[("$count", "true")]).await;
    assert_eq!(users.ids(), [w.alice, w.carol]);
    assert_eq!(users.json()["@odata.count"], 2);
    let orgs = w.app.odata_as(&token, "Organisations", &[]).await;
    assert_eq!(orgs.ids(), [w.alpha]);
    let token = w.app.token_for(w.bob).await;
    let users = w.app.odata_as(&token, "Users", &[]).await;
    assert_eq!(users.ids(), [w.bob]);
    let orgs = w.app.odata_as(&token, "Organisations", &[]).await;
    assert_eq!(orgs.ids(), [w.beta]);
}

#[rocket::async_test]
async fn a_session_cookie_reads_the_callers_organisation_only() {
    let w = world().await;
    assert_eq!(w.app.login("bob@beta.example", PASSWORD).await, Status::Ok);
    let users = w.app.odata("Users").await;
    assert_eq!(users.ids(), [w.bob]);
    let orgs = w.app.odata("Organisations?$expand=members").await;
    assert_eq!(orgs.ids(), [w.beta]);
    assert_eq!(ids(&orgs.value()[0]["members"]), [w.bob]);
    assert_eq!(w.app.logout().await, Status::SeeOther);
    w.app
        .odata("Users")
        .await
        .assert_error(Status::Unauthorized, None);
}

#[rocket::async_test]
async fn filter_cannot_reach_another_organisation() {
    let w = world().await;
    let token = w.app.token_for(w.alice).await;
    let beta = w.beta.to_string();
    let bob = w.bob.to_string();
    for (resource, filter) in [
        ("Users", "email eq 'bob@beta.example'".to_owned()),
        ("Users", format!("id eq {bob}")),
        ("Users", format!("organisation_id eq {beta}")),
        ("Users", "organisation/name eq 'Beta'".to_owned()),
        ("Users", "contains(email, 'beta')".to_owned()),
        ("Organisations", "name eq 'Beta'".to_owned()),
        ("Organisations", format!("id eq {beta}")),
        (
            "Organisations",
            "members/any(m: m/email eq 'bob@beta.example')".to_owned(),
        ),
        (
            "Teams",
            "people/any(p: p/email eq 'bob@beta.example')".to_owned(),
        ),
        ("Teams", format!("people/any(p: p/id eq {bob})")),
    ] {
        let answer = w
            .app
            .odata_as(&token, resource, &[("$filter", &filter)])
            .await;
        assert_eq!(
            answer.ids(),
            Vec::<i64>::new(),
            "{resource}?$filter={filter} reaches Beta's rows"
        );
    }
    let teams = w
        .app
        .odata_as(&token, "Teams", &[("$filter", "people/any()")])
        .await;
    assert_eq!(
        teams.ids(),
        [w.alpha],
        "Beta's people are not visible to Alice"
    );
}

#[rocket::async_test]
async fn key_lookups_of_another_organisations_rows_are_404() {
    let w = world().await;
    let token = w.app.token_for(w.alice).await;
    for resource in [
        format!("Users({})", w.bob),
        format!("Users(id={})", w.bob),
        format!("Users({})/organisation", w.bob),
        format!("Organisations({})", w.beta),
        format!("Organisations({})/members", w.beta),
        format!("Organisations({})/members/$count", w.beta),
    ] {
        w.app
            .odata_as(&token, &resource, &[])
            .await
            .assert_error(Status::NotFound, None);
    }
    let carol = w
        .app
        .odata_as(&token, &format!("Users({})", w.carol), &[])
        .await;
    assert_eq!(carol.json()["email"], "carol@alpha.example");
    let org = w
        .app
        .odata_as(&token, &format!("Users({})/organisation", w.alice), &[])
        .await;
    assert_eq!(org.json()["id"], w.alpha);
    let members = w
        .app
        .odata_as(&token, &format!("Organisations({})/members", w.alpha), &[])
        .await;
    assert_eq!(members.ids(), [w.alice, w.carol]);
}

#[rocket::async_test]
async fn counts_cannot_see_another_organisation() {
    let w = world().await;
    let token = w.app.token_for(w.alice).await;
    for (resource, options, expected) in [
        ("Users/$count", vec![], "2"),
        ("Organisations/$count", vec![], "1"),
        (
            "Users/$count",
            vec![("$filter", "endswith(email, 'beta.example')")],
            "0",
        ),
        ("Teams/$count", vec![], "2"),
    ] {
        let answer = w.app.odata_as(&token, resource, &options).await;
        assert_eq!(answer.ok().body, expected, "{resource} {options:?}");
    }
    let people = w
        .app
        .odata_as(&token, &format!("Teams({})/people/$count", w.beta), &[])
        .await;
    assert_eq!(
        people.ok().body,
        "0",
        "Beta's people are not Alice's to count"
    );
}

#[rocket::async_test]
async fn expand_cannot_reach_another_organisation() {
    let w = world().await;
    let token = w.app.token_for(w.alice).await;
    let orgs = w
        .app
        .odata_as(
            &token,
            "Organisations",
            &[("$expand", "members($count=true)")],
        )
        .await;
    assert_eq!(orgs.ids(), [w.alpha]);
    let alpha = &orgs.value()[0];
    assert_eq!(ids(&alpha["members"]), [w.alice, w.carol]);
    assert_eq!(alpha["members@odata.count"], 2);
    let users = w
        .app
        .odata_as(
            &token,
            "Users",
            &[("$expand", "organisation($expand=members)")],
        )
        .await;
    for user in users.value() {
        assert_eq!(user["organisation"]["id"], w.alpha);
        assert_eq!(ids(&user["organisation"]["members"]), [w.alice, w.carol]);
    }
    let teams = w
        .app
        .odata_as(&token, "Teams", &[("$expand", "people($count=true)")])
        .await;
    assert_eq!(teams.ids(), [w.alpha, w.beta], "Teams has no scope");
    for team in teams.value() {
        let expected = if team["id"] == w.alpha {
            vec![w.alice, w.carol]
        } else {
            vec![]
        };
        assert_eq!(ids(&team["people"]), expected, "team {}", team["id"]);
        assert_eq!(
            team["people@odata.count"],
            expected.len(),
            "team {}",
            team["id"]
        );
    }
    let people = w
        .app
        .odata_as(&token, &format!("Teams({})/people", w.beta), &[])
        .await;
    assert_eq!(people.ids(), Vec::<i64>::new());
    let team = w
        .app
        .odata_as(
            &token,
            &format!("Teams({})", w.beta),
            &[("$expand", "people")],
        )
        .await;
    assert_eq!(ids(&team.json()["people"]), Vec::<i64>::new());
}

#[rocket::async_test]
async fn search_cannot_reach_another_organisation() {
    let w = world().await;
    let token = w.app.token_for(w.alice).await;
    for (resource, search, expected) in [
        ("Users", "bob", vec![]),
        ("Users", "beta", vec![]),
        ("Users", "alpha", vec![w.alice, w.carol]),
        ("Users", "carol", vec![w.carol]),
        ("Organisations", "Beta", vec![]),
        ("Organisations", "alp", vec![w.alpha]),
    ] {
        let answer = w
            .app
            .odata_as(&token, resource, &[("$search", search)])
            .await;
        assert_eq!(answer.ids(), expected, "{resource}?$search={search}");
    }
    let count = w
        .app
        .odata_as(&token, "Users/$count", &[("$search", "bob")])
        .await;
    assert_eq!(count.ok().body, "0");
}

#[rocket::async_test]
async fn a_caller_without_an_organisation_sees_no_members() {
    let w = world().await;
    let token = w.app.token_for(w.dave).await;
    assert_eq!(
        w.app.odata_as(&token, "Users", &[]).await.ids(),
        Vec::<i64>::new()
    );
    assert_eq!(
        w.app.odata_as(&token, "Organisations", &[]).await.ids(),
        Vec::<i64>::new()
    );
    assert_eq!(
        w.app.odata_as(&token, "Users/$count", &[]).await.ok().body,
        "0"
    );
}

#[rocket::async_test]
async fn users_never_expose_a_password_or_remember_token() {
    let w = world().await;
    let token = w.app.token_for(w.alice).await;
    let metadata = w.app.odata_as(&token, "$metadata", &[]).await;
    for secret in ["password", "remember_token"] {
        assert!(!metadata.ok().body.contains(secret), "{}", metadata.body);
    }
    let users = w.app.odata_as(&token, "Users", &[]).await;
    for user in users.value() {
        assert_eq!(
            keys_of(&user),
            [
                "created_at",
                "email",
                "email_verified_at",
                "id",
                "name",
                "organisation_id",
                "updated_at"
            ]
            .map(String::from)
            .into()
        );
    }
    for (resource, option, value, target) in [
        ("Users", "$select", "password", "$select"),
        ("Users", "$select", "name,remember_token", "$select"),
        ("Users", "$filter", "password ne null", "$filter"),
        (
            "Users",
            "$filter",
            "startswith(password, '$argon2')",
            "$filter",
        ),
        ("Users", "$orderby", "remember_token", "$orderby"),
        (
            "Organisations",
            "$expand",
            "members($select=password)",
            "$expand",
        ),
        (
            "Organisations",
            "$filter",
            "members/any(m: m/password ne null)",
            "$filter",
        ),
    ] {
        w.app
            .odata_as(&token, resource, &[(option, value)])
            .await
            .assert_error(Status::BadRequest, Some(target));
    }
    let hashed = w
        .app
        .odata_as(&token, "Users", &[("$search", "argon2")])
        .await;
    assert_eq!(hashed.ids(), Vec::<i64>::new(), "the hash is not searched");
}

#[rocket::async_test]
async fn guests_cannot_reach_a_non_public_set_through_a_public_one() {
    let app = spawn_fixture_with(|f| f.merge(("odata.sets.Categories.public", false))).await;
    app.odata("Things").await.ok();
    app.odata("Categories")
        .await
        .assert_error(Status::Unauthorized, None);
    app.odata("Things(1)/category")
        .await
        .assert_error(Status::Unauthorized, None);
    let mut leaks = Vec::new();
    for (option, value) in [
        ("$expand", "category"),
        ("$expand", "category($select=name)"),
        ("$filter", "category/name eq 'Fruit'"),
        ("$orderby", "category/name"),
    ] {
        let answer = app
            .get_uri(&odata_uri("Things", &[(option, value)]), &[])
            .await;
        if matches!(answer.status.code, 400 | 401) {
            answer.assert_error(answer.status, None);
        } else {
            leaks.push(format!(
                "Things?{option}={value} answered {}",
                answer.status
            ));
        }
    }
    assert!(
        leaks.is_empty(),
        "a guest reads the non-public Categories through the public Things:\n{}",
        leaks.join("\n")
    );
    let metadata = app.odata("$metadata").await;
    assert!(
        !metadata.ok().body.contains("Categories"),
        "{}",
        metadata.body
    );
}

/// A read is planned whole before its first statement: an expansion the
/// caller may not read is refused whatever the rows, even where no parent
/// would have been found to expand.
#[rocket::async_test]
async fn an_unreadable_nested_expansion_is_refused_whatever_the_rows() {
    let app = spawn_fixture_with(|f| f.merge(("odata.sets.Colours.public", false))).await;
    app.odata("Categories?$expand=items").await.ok();
    for resource in [
        "Categories?$expand=items($expand=colour)",
        "Categories?$filter=id eq -1&$expand=items($expand=colour)",
        "Categories?$top=0&$count=true&$expand=items($expand=colour)",
        "Categories(1)/items?$expand=colour",
        "Categories(999)/items?$expand=colour",
    ] {
        app.odata(resource)
            .await
            .assert_error(Status::Unauthorized, None);
    }
}

#[rocket::async_test]
async fn signed_in_callers_read_non_public_configured_sets() {
    let w = world().await;
    w.app
        .odata("Teams")
        .await
        .assert_error(Status::Unauthorized, None);
    let token = w.app.token_for(w.carol).await;
    let teams = w
        .app
        .odata_as(&token, "Teams", &[("$orderby", "name desc")])
        .await;
    assert_eq!(teams.ids(), [w.beta, w.alpha]);
}

impl TestApp {
    /// `last_used_at` of the token whose SHA-256 is `digest`, as epoch seconds.
    async fn token_used_at(&self, token: &str) -> Option<i64> {
        let dialect = self.db.dialect();
        let sql = format!(
            "SELECT {} AS used FROM personal_access_tokens WHERE token = $1",
            dialect.epoch_of("last_used_at")
        );
        let row = self
            .db
            .fetch_optional(
                sqlx::query(&dialect.placeholders(&sql)).bind(gatehouse::domain::sha256_hex(token)),
            )
            .await
            .expect("read token")
            .expect("token row");
        sqlx::Row::try_get(&row, "used").expect("used column")
    }
}

#[rocket::async_test]
async fn a_token_records_its_use_at_most_once_a_minute() {
    let w = world().await;
    let app = &w.app;
    let token = app.token_for(w.alice).await;
    assert_eq!(app.token_used_at(&token).await, None);
    app.odata_as(&token, "Users", &[]).await.ok();
    let first = app.token_used_at(&token).await.expect("use recorded");
    app.set_utc_moment("personal_access_tokens", "last_used_at", -30)
        .await;
    let half_a_minute_ago = app.token_used_at(&token).await.expect("shifted");
    app.odata_as(&token, "Users", &[]).await.ok();
    assert_eq!(app.token_used_at(&token).await, Some(half_a_minute_ago));
    app.set_utc_moment("personal_access_tokens", "last_used_at", -61)
        .await;
    app.odata_as(&token, "Users", &[]).await.ok();
    let again = app.token_used_at(&token).await.expect("recorded again");
    assert!(again >= first, "{again} < {first}");
}

#[rocket::async_test]
async fn an_expired_token_is_401() {
    let w = world().await;
    let app = &w.app;
    let token = app.token_for(w.alice).await;
    app.set_utc_moment("personal_access_tokens", "expires_at", 3600)
        .await;
    app.odata_as(&token, "Users", &[]).await.ok();
    app.set_utc_moment("personal_access_tokens", "expires_at", -1)
        .await;
    app.odata_as(&token, "Users", &[])
        .await
        .assert_error(Status::Unauthorized, None);
}

#[rocket::async_test]
async fn a_token_reads_only_as_the_user_model_and_with_a_reading_ability() {
    let w = world().await;
    let app = &w.app;
    let token = app.token_for(w.alice).await;
    app.odata_as(&token, "Users", &[]).await.ok();
    let set = |column: &'static str, value: Option<&'static str>| async move {
        let sql = match column {
            "tokenable_type" => "UPDATE personal_access_tokens SET tokenable_type = $1",
            _ => "UPDATE personal_access_tokens SET abilities = $1",
        };
        app.execute(app.db.query(sql).bind(value)).await;
    };
    // Another model's Sanctum token with the same id (a database shared
    // with Laravel): not this user.
    set("tokenable_type", Some("App\\Models\\Team")).await;
    app.odata_as(&token, "Users", &[])
        .await
        .assert_error(Status::Unauthorized, None);
    set("tokenable_type", Some("App\\Models\\User")).await;
    app.odata_as(&token, "Users", &[]).await.ok();
    for refused in [Some("[\"reports:write\"]"), Some("[]"), None] {
        set("abilities", refused).await;
        app.odata_as(&token, "Users", &[])
            .await
            .assert_error(Status::Unauthorized, None);
    }
    set("abilities", Some("[\"reports:write\",\"odata:read\"]")).await;
    app.odata_as(&token, "Users", &[]).await.ok();
}

//! Rows a test creates or inspects, on the test's own database: users,
//! organisations, sessions.

use gatehouse::auth::{users, PasswordHasher};
use gatehouse::config::HashAlgorithm;
use gatehouse::db::TextColumn;
use gatehouse::domain::Email;
use secrecy::SecretString;
use serde_json::Value;
use sqlx::Row;

use crate::helpers::TestApp;

impl TestApp {
    /// Creates a user with `password` (argon2id) and answers its id.
    pub async fn create_user(&self, email: &str, password: &str) -> i64 {
        let hash = PasswordHasher::new(HashAlgorithm::Argon2id, 0)
            .expect("hashing threads")
            .hash(&SecretString::from(password.to_owned()))
            .await
            .expect("hash");
        self.create_user_with_hash(email, &hash).await
    }

    /// The id of the user with `email`.
    pub async fn user_id(&self, email: &str) -> i64 {
        let email = Email::parse(email).expect("valid email");
        users::find_by_email(&self.db, &email)
            .await
            .expect("user lookup")
            .expect("the user exists")
            .id
    }

    /// Creates a user with a given password hash.
    pub async fn create_user_with_hash(&self, email: &str, hash: &str) -> i64 {
        let email = Email::parse(email).expect("valid email");
        users::create(&self.db, "Test User", &email, hash)
            .await
            .expect("create user")
    }

    /// Creates a user who already belongs to an organisation.
    pub async fn create_user_with_organisation(&self, email: &str, password: &str) -> i64 {
        let user_id = self.create_user(email, password).await;
        self.join_organisation(user_id).await;
        user_id
    }

    /// Makes `user_id` a member of a new organisation (the reference host's
    /// intent loop then asks for nothing more).
    pub async fn join_organisation(&self, user_id: i64) {
        let org_id = self.organisation("Acme").await;
        self.execute(
            self.db
                .query("INSERT INTO organisation_user (organisation_id, user_id) VALUES ($1, $2)")
                .bind(org_id)
                .bind(user_id),
        )
        .await;
    }

    /// Creates an organisation called `name` and answers its id.
    pub async fn organisation(&self, name: &str) -> i64 {
        let name = name.to_owned();
        let mut tx = self.db.begin().await.expect("a transaction");
        let id = self
            .db
            .insert_id(
                &mut *tx,
                "INSERT INTO organisations (name, legal_form, company_size, function) \
                 VALUES ($1, 1, 'small', 'developer')",
                |query| query.bind(name),
            )
            .await
            .expect("insert organisation");
        tx.commit().await.expect("commit the organisation");
        id
    }

    /// Sets `column` of every row of `table` to the UTC moment `seconds` from
    /// now (negative: in the past), as a literal every engine converts.
    pub async fn set_utc_moment(&self, table: &str, column: &str, seconds: i64) {
        let moment = time::OffsetDateTime::now_utc() + time::Duration::seconds(seconds);
        let format =
            time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
        let literal = moment.format(&format).expect("format a moment");
        self.execute(sqlx::query(
            &self
                .db
                .dialect()
                .placeholders(&format!("UPDATE {table} SET {column} = '{literal}'")),
        ))
        .await;
    }

    /// Runs a statement on the test database.
    pub async fn execute<'q>(
        &self,
        query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    ) -> u64 {
        self.db.execute(query).await.expect("statement")
    }

    /// Number of rows in `table`.
    pub async fn count(&self, table: &str) -> i64 {
        let row = self
            .db
            .fetch_optional(sqlx::query(
                &self
                    .db
                    .dialect()
                    .placeholders(&format!("SELECT COUNT(*) AS n FROM {table}")),
            ))
            .await
            .expect("count")
            .expect("row");
        row.try_get("n").expect("n")
    }

    /// Every session row as (id, user_id, payload as JSON).
    pub async fn sessions(&self) -> Vec<(String, Option<i64>, Value)> {
        self.db
            .fetch_all(
                self.db
                    .query("SELECT id, user_id, payload FROM sessions ORDER BY id"),
            )
            .await
            .expect("sessions")
            .into_iter()
            .map(|row| {
                let payload = row.text("payload").expect("payload").expect("a payload");
                (
                    row.try_get("id").expect("id"),
                    row.try_get("user_id").expect("user_id"),
                    serde_json::from_str(&payload).expect("payload is JSON"),
                )
            })
            .collect()
    }

    /// Sets `key` of the session data to `value` in every stored session
    /// of `user_id` (what the session keeps, aged by a test).
    pub async fn set_session_data(&self, user_id: i64, key: &str, value: serde_json::Value) {
        for (id, owner, mut payload) in self.sessions().await {
            if owner != Some(user_id) {
                continue;
            }
            payload["data"][key] = value.clone();
            let sql = self
                .db
                .dialect()
                .placeholders("UPDATE sessions SET payload = $1 WHERE id = $2");
            self.execute(sqlx::query(&sql).bind(payload.to_string()).bind(id))
                .await;
        }
    }

    /// The stored password hash of `user_id`.
    pub async fn password_hash(&self, user_id: i64) -> String {
        self.string_column("password", user_id)
            .await
            .expect("password")
    }

    /// `users.remember_token` of `user_id`.
    pub async fn remember_token(&self, user_id: i64) -> Option<String> {
        self.string_column("remember_token", user_id).await
    }

    async fn string_column(&self, column: &str, user_id: i64) -> Option<String> {
        let sql = format!("SELECT {column} AS v FROM users WHERE id = $1");
        let row = self
            .db
            .fetch_optional(sqlx::query(&self.db.dialect().placeholders(&sql)).bind(user_id))
            .await
            .expect("select user")
            .expect("user row");
        row.try_get("v").expect("column")
    }
}

impl TestApp {
    /// The stored security events of `user_id`, oldest first, by name.
    pub async fn event_names(&self, user_id: i64) -> Vec<String> {
        let rows = self
            .db
            .fetch_all(
                self.db
                    .query("SELECT event FROM gatehouse_security_events WHERE user_id = $1 ORDER BY id")
                    .bind(user_id),
            )
            .await
            .expect("security events");
        rows.iter()
            .map(|row| row.text("event").ok().flatten().unwrap_or_default())
            .collect()
    }
}

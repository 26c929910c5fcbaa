//! The reference host's organisation feature: a user without an organisation
//! is asked to set one up before anything else.

use sqlx::Row;

use gatehouse::{
    AuthUser, Db, DbError, DefaultDispenser, FieldErrors, Intent, IntentContext, IntentDispenser,
    IntentResult, OrgSetupHandler, OrgSetupRequest,
};

/// Sends a user without an organisation to `org_setup`, everyone else where
/// the default dispenser would.
#[derive(Debug, Clone, Copy, Default)]
pub struct OrgDispenser;

/// The id of the user's organisation, if any.
pub async fn organisation_of(db: &Db, user_id: i64) -> Result<Option<i64>, DbError> {
    let row = db
        .fetch_optional(
            db.query("SELECT organisation_id FROM organisation_user WHERE user_id = $1 ORDER BY organisation_id")
                .bind(user_id),
        )
        .await?;
    row.map(|r| r.try_get("organisation_id")).transpose()
}

#[rocket::async_trait]
impl IntentDispenser for OrgDispenser {
    async fn dispense(&self, user: &AuthUser, ctx: &IntentContext) -> Intent {
        match organisation_of(ctx.db(), user.id).await {
            Ok(None) => Intent::OrgSetup {
                person_name: user.name.clone(),
            },
            Ok(Some(_)) => DefaultDispenser.dispense(user, ctx).await,
            Err(e) => {
                tracing::error!(error = %e, "organisation lookup failed");
                DefaultDispenser.dispense(user, ctx).await
            }
        }
    }
}

/// Creates the organisation and makes the user its first member.
#[derive(Debug, Clone, Copy, Default)]
pub struct OrgHandler;

async fn create(db: &Db, user: &AuthUser, org: &OrgSetupRequest) -> Result<(), DbError> {
    let d = db.dialect();
    let mut tx = db.begin().await?;
    let insert = format!(
        "INSERT INTO organisations (name, legal_form, company_size, {function}, billing_email, \
         marketing_consent, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, {now}, {now})",
        function = d.quote("function"),
        now = d.now_utc()
    );
    let id = db
        .insert_id(&mut *tx, &insert, |query| {
            query
                .bind(org.org_name.clone())
                .bind(org.legal_form.code())
                .bind(org.company_size.as_str())
                .bind(org.function.as_str())
                .bind(org.billing_email.as_ref().map(|e| e.as_str().to_owned()))
                .bind(org.marketing_consent)
        })
        .await?;
    sqlx::query(d.static_placeholders(
        "INSERT INTO organisation_user (organisation_id, user_id) VALUES ($1, $2)",
    ))
    .bind(id)
    .bind(user.id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

#[rocket::async_trait]
impl OrgSetupHandler for OrgHandler {
    async fn handle(
        &self,
        user: &AuthUser,
        request: OrgSetupRequest,
        ctx: &IntentContext,
    ) -> IntentResult {
        match organisation_of(ctx.db(), user.id).await {
            Ok(Some(_)) => {
                return IntentResult::error(FieldErrors::single("org_name", "already_member"))
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(error = %e, "organisation lookup failed");
                return IntentResult::error(FieldErrors::single("org_name", "server_error"));
            }
        }
        match create(ctx.db(), user, &request).await {
            Ok(()) => IntentResult::satisfied(),
            Err(e) => {
                tracing::error!(error = %e, "organisation could not be created");
                IntentResult::error(FieldErrors::single("org_name", "server_error"))
            }
        }
    }
}

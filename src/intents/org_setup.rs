//! The organisation set-up submission, typed, and the host's handler of it.

use super::{IntentContext, IntentResult};
use crate::body::Input;
use crate::domain::Email;
use crate::error::{AuthError, FieldErrors};
use crate::session::AuthUser;

/// Legal form of the organisation (`1` or `2` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LegalForm {
    /// `1`: a company.
    Company,
    /// `2`: an individual (sole trader).
    Individual,
}

impl LegalForm {
    /// The wire and storage value.
    pub fn code(self) -> i64 {
        match self {
            Self::Company => 1,
            Self::Individual => 2,
        }
    }
}

macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every accepted value, in wire form.
            pub const ALL: &'static [&'static str] = &[$($wire),+];

            /// The wire and storage value.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $wire),+ }
            }

            /// Parses the wire value.
            pub fn parse(raw: &str) -> Option<Self> {
                match raw { $($wire => Some(Self::$variant),)+ _ => None }
            }
        }
    };
}

wire_enum!(
    /// Head count bracket.
    CompanySize {
        /// Just the user.
        Solo = "solo",
        /// A small team.
        Small = "small",
        /// A growing company.
        Growing = "growing",
        /// Mid-market.
        MidMarket = "mid_market",
        /// Enterprise.
        Enterprise = "enterprise",
    }
);

wire_enum!(
    /// The user's role.
    JobFunction {
        /// Developer.
        Developer = "developer",
        /// Technical lead.
        TechLead = "tech_lead",
        /// Architect.
        Architect = "architect",
        /// Executive.
        Executive = "executive",
        /// Anything else.
        Other = "other",
    }
);

/// A validated organisation set-up submission.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OrgSetupRequest {
    /// Organisation name, 1..=255 characters, trimmed.
    pub org_name: String,
    /// Legal form.
    pub legal_form: LegalForm,
    /// Head count bracket.
    pub company_size: CompanySize,
    /// The user's role.
    pub function: JobFunction,
    /// Where invoices go, when given.
    pub billing_email: Option<Email>,
    /// Whether the user agreed to marketing mail.
    pub marketing_consent: bool,
}

impl OrgSetupRequest {
    /// Validates the submitted fields; every problem is reported at once.
    pub(crate) fn from_input(input: &Input) -> Result<Self, AuthError> {
        let mut errors = FieldErrors::new();
        let org_name = input
            .required_text("org_name", &mut errors)
            .map(|n| n.trim().to_owned());
        if org_name.as_ref().is_some_and(|n| n.chars().count() > 255) {
            errors.add("org_name", "max_length");
        }
        let legal_form = match input.integer("legal_form", &mut errors) {
            Some(1) => Some(LegalForm::Company),
            Some(2) => Some(LegalForm::Individual),
            Some(_) => {
                errors.add("legal_form", "in");
                None
            }
            None => {
                if errors.count("legal_form") == 0 {
                    errors.add("legal_form", "required");
                }
                None
            }
        };
        let company_size = choice(input, "company_size", CompanySize::parse, &mut errors);
        let function = choice(input, "function", JobFunction::parse, &mut errors);
        let billing_email = input.email("billing_email", &mut errors);
        let marketing_consent = input.boolean("marketing_consent", &mut errors);
        match (org_name, legal_form, company_size, function) {
            (Some(org_name), Some(legal_form), Some(company_size), Some(function))
                if errors.is_empty() =>
            {
                Ok(Self {
                    org_name,
                    legal_form,
                    company_size,
                    function,
                    billing_email,
                    marketing_consent,
                })
            }
            _ => Err(AuthError::Validation(errors)),
        }
    }
}

fn choice<T>(
    input: &Input,
    field: &str,
    parse: fn(&str) -> Option<T>,
    errors: &mut FieldErrors,
) -> Option<T> {
    let raw = input.required_text(field, errors)?;
    let parsed = parse(&raw);
    if parsed.is_none() {
        errors.add(field, "in");
    }
    parsed
}

/// Handles an organisation set-up submission, already validated and typed.
#[rocket::async_trait]
pub trait OrgSetupHandler: Send + Sync + 'static {
    /// Creates the organisation (or says why not).
    async fn handle(
        &self,
        user: &AuthUser,
        request: OrgSetupRequest,
        ctx: &IntentContext,
    ) -> IntentResult;
}

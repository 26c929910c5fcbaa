//! The `gatehouse` command line. Every command reads the same configuration
//! as the server (Rocket.toml, `ROCKET_CONFIG`, `ROCKET_PROFILE`, `ROCKET_*`).

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use secrecy::{ExposeSecret, SecretString};
use time::OffsetDateTime;

use gatehouse::{AccountError, Accounts, CredentialInfo, Email};

mod breached;

/// Gatehouse reference host.
#[derive(Debug, Parser)]
#[command(
    name = "gatehouse",
    version,
    about = "Sign-in, sessions and OData for Rocket applications"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the server (the default).
    Serve,
    /// Manage user accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage API tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Manage passkeys.
    #[command(subcommand)]
    Passkey(PasskeyCommand),
    /// Manage sign-in links to OpenID providers.
    #[command(subcommand)]
    Oidc(OidcCommand),
    /// Apply database migrations and exit.
    Migrate,
    /// Say what `/readyz` would (the configuration, the database and its
    /// migrations, the mail transport, the OpenID providers); exit non-zero
    /// when not ready.
    Check,
    /// Check passwords against the Pwned Passwords corpus, offline.
    #[command(subcommand)]
    Breached(breached::BreachedCommand),
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Create an account.
    Add {
        /// E-mail address (sign-in name).
        email: String,
        /// Display name (defaults to the part before `@`).
        #[arg(long)]
        name: Option<String>,
        /// Read the password from one line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Replace an account's password (ends every session of the account).
    SetPassword {
        /// E-mail address of the account.
        email: String,
        /// Read the password from one line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Sign an account out everywhere: end every session and void its
    /// remember-me cookies.
    EndSessions {
        /// E-mail address of the account.
        email: String,
    },
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Create a personal access token; it is printed once, on the last line.
    Create {
        /// E-mail address of the account the token acts for.
        email: String,
        /// A label to recognise the token by.
        #[arg(long)]
        name: String,
    },
    /// List an account's tokens: id, name, when created and last used (UTC).
    List {
        /// E-mail address of the account.
        email: String,
    },
    /// Revoke a token: it signs nothing in any more.
    Revoke {
        /// The token's id, as `token list` shows it.
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
enum PasskeyCommand {
    /// List an account's passkeys: id, name, when added and last used (UTC).
    List {
        /// E-mail address of the account.
        email: String,
    },
    /// Remove a passkey: it signs nobody in any more.
    Remove {
        /// The passkey's id, as `passkey list` shows it.
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
enum OidcCommand {
    /// List an account's provider links: id, provider, when linked and last
    /// used (UTC).
    List {
        /// E-mail address of the account.
        email: String,
    },
    /// Remove a provider link: that provider account signs nobody in any
    /// more.
    Unlink {
        /// The link's id, as `oidc list` shows it.
        id: i64,
    },
}

/// A failed command: the message goes to standard error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct CliError(String);

impl From<AccountError> for CliError {
    fn from(e: AccountError) -> Self {
        CliError(e.to_string())
    }
}

/// Runs the command line; the exit code is non-zero on any failure.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(),
        Command::Breached(command) => breached::run(command),
        command => {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => return fail(CliError(e.to_string())),
            };
            match runtime.block_on(run(command)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            }
        }
    }
}

fn fail(e: CliError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::FAILURE
}

fn serve() -> ExitCode {
    let exporting = match crate::logging::init(&rocket::Config::figment()) {
        Ok(exporting) => exporting,
        Err(e) => {
            eprintln!("error: the server could not start: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The stopped server is dropped while the runtime still runs: its
    // database pools close their connections on the runtime's threads.
    let served = rocket::execute(async {
        crate::rocket(rocket::Config::figment())
            .launch()
            .await
            .map(drop)
    });
    exporting.flush();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: the server could not start: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn open() -> Result<Accounts, CliError> {
    Ok(Accounts::open(&rocket::Config::figment()).await?)
}

fn parse_email(raw: &str) -> Result<Email, CliError> {
    Email::parse(raw).ok_or_else(|| CliError(format!("`{raw}` is not an e-mail address")))
}

fn read_password(from_stdin: bool) -> Result<SecretString, CliError> {
    if from_stdin || !std::io::stdin().is_terminal() {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| CliError(format!("cannot read the password: {e}")))?;
        let line = line.strip_suffix('\n').unwrap_or(&line);
        return Ok(line.strip_suffix('\r').unwrap_or(line).into());
    }
    let first = rpassword::prompt_password("Password: ").map_err(|e| CliError(e.to_string()))?;
    let again =
        rpassword::prompt_password("Repeat password: ").map_err(|e| CliError(e.to_string()))?;
    if first != again {
        return Err(CliError("the passwords do not match".into()));
    }
    Ok(first.into())
}

async fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Serve | Command::Breached(_) => {
            unreachable!("handled before the runtime starts")
        }
        Command::Migrate => {
            open().await?;
            println!("migrations applied");
        }
        Command::Check => {
            let readiness = gatehouse::readiness(&rocket::Config::figment()).await;
            println!("{readiness}");
            if !readiness.is_ready() {
                return Err(CliError("a check failed".into()));
            }
        }
        Command::User(UserCommand::Add {
            email,
            name,
            password_stdin,
        }) => {
            let email = parse_email(&email)?;
            let accounts = open().await?;
            let password = read_password(password_stdin)?;
            let id = accounts.add_user(&email, name.as_deref(), password).await?;
            println!("user {id} created: {email}");
        }
        Command::User(UserCommand::SetPassword {
            email,
            password_stdin,
        }) => {
            let email = parse_email(&email)?;
            let accounts = open().await?;
            let password = read_password(password_stdin)?;
            let ended = accounts.set_password(&email, password).await?;
            println!("password changed for {email}; {ended} session(s) ended");
        }
        Command::Token(TokenCommand::Create { email, name }) => {
            let email = parse_email(&email)?;
            let accounts = open().await?;
            let token = accounts
                .create_token(&email, &name)
                .await
                .map_err(|e| match e {
                    AccountError::Name(_) => {
                        CliError("--name must have 1 to 255 characters".into())
                    }
                    e => e.into(),
                })?;
            println!("token \"{name}\" created for {email}; it is shown only once:");
            println!("{}", token.expose_secret());
        }
        Command::Token(TokenCommand::List { email }) => {
            let email = parse_email(&email)?;
            let tokens = open().await?.tokens(&email).await?;
            if tokens.is_empty() {
                println!("no tokens for {email}");
            } else {
                print!("{}", credential_table(&tokens));
            }
        }
        Command::Token(TokenCommand::Revoke { id }) => {
            open().await?.revoke_token(id).await?;
            println!("token {id} revoked");
        }
        Command::Passkey(PasskeyCommand::List { email }) => {
            let email = parse_email(&email)?;
            let passkeys = open().await?.passkeys(&email).await?;
            if passkeys.is_empty() {
                println!("no passkeys for {email}");
            } else {
                print!("{}", credential_table(&passkeys));
            }
        }
        Command::Passkey(PasskeyCommand::Remove { id }) => {
            open().await?.remove_passkey(id).await?;
            println!("passkey {id} removed");
        }
        Command::Oidc(OidcCommand::List { email }) => {
            let email = parse_email(&email)?;
            let links = open().await?.oidc_links(&email).await?;
            if links.is_empty() {
                println!("no provider links for {email}");
            } else {
                print!("{}", credential_table(&links));
            }
        }
        Command::Oidc(OidcCommand::Unlink { id }) => {
            open().await?.unlink_oidc(id).await?;
            println!("provider link {id} removed");
        }
        Command::User(UserCommand::EndSessions { email }) => {
            let email = parse_email(&email)?;
            let ended = open().await?.end_sessions(&email).await?;
            println!("{ended} session(s) ended for {email}");
        }
    }
    Ok(())
}

/// Tokens or passkeys as an aligned table with a header line.
fn credential_table(tokens: &[CredentialInfo]) -> String {
    let mut rows = vec![[
        "ID".to_owned(),
        "NAME".to_owned(),
        "CREATED (UTC)".to_owned(),
        "LAST USED (UTC)".to_owned(),
    ]];
    rows.extend(tokens.iter().map(|t| {
        [
            t.id.to_string(),
            t.name.clone(),
            t.created_at.map_or_else(|| "unknown".to_owned(), utc),
            t.last_used_at.map_or_else(|| "never".to_owned(), utc),
        ]
    }));
    let width = |column: usize| {
        rows.iter()
            .map(|row| row[column].chars().count())
            .max()
            .unwrap_or_default()
    };
    let widths = [width(0), width(1), width(2)];
    let mut table = String::new();
    for [id, name, created, used] in &rows {
        let line = format!(
            "{id:<w0$}  {name:<w1$}  {created:<w2$}  {used}",
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        );
        table.push_str(line.trim_end());
        table.push('\n');
    }
    table
}

/// `2026-11-26 09:30:00`.
fn utc(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

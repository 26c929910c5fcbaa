//! The statements behind the OData benchmark (`bench/odata.sh`) and the
//! SQLite raw-SQL limit.
//!
//! For the four reference queries it builds the exact statement Gatehouse
//! sends for a request, with the library's own `parse_query`, `check_query`,
//! `Page` and `seek_statements` (the guest's scopes, the page size given, and for
//! `$count=true` the count carried by the page statement as its last column
//! `__count`: one statement per request, as the service sends it when the
//! page starts at the first row), in the dialect of the database named.
//!
//! On SQLite it then runs them on the same file through the same read threads
//! (`SqliteReader::for_url`: plain SQLite connections on their threads, as the
//! OData service reads) by 16 concurrent tasks on 2 runtime threads, with no
//! HTTP and no JSON: every row is stepped through and each column read;
//! encoding it is not part of the limit. With `--json`, each page is also
//! written as the response body's JSON by Gatehouse's own row encoder
//! ([`Layout`]), still without HTTP.
//!
//! On PostgreSQL and MariaDB it runs them through the service's own bulk
//! readers (`Readers::open` with the service's default read limits, and the
//! rows handed to a sink as the service hands them): without `--json` the
//! sink takes each row as the native driver delivers it and reads none of
//! its columns, which is what the driver alone costs; with `--json` each
//! page is written by the service's row encoder ([`BodySink`]). Neither
//! has HTTP. The engines' own limits are measured by their own clients
//! (pgbench, mariadb-slap; see bench/odata.sh) on the `--bound`
//! (pgbench) and `--inline` (mariadb-slap) statements.
//!
//! `cargo run --release --example odata_raw -- <db> [seconds=10] [page_size=1000] [only=q1,q3] [--json] [--inline | --bound]`
//!
//! `<db>`: a SQLite file path, or a URL `sqlite://…`, `postgres://…`,
//! `mysql://…` (only its scheme is used for the server engines).
//!
//! Prints the SQL and binds of each query as `# <name>: <text>  binds [...]`
//! (only that when `seconds` is 0), then one line per query:
//! `<name> qps=<queries per second> rows=<rows read> count=<count or ->`
//! (rows read include the probe row beyond the page when more rows remain).
//! With `--inline` it prints instead, and only, one line per query:
//! `<name>\t<statement with every bind written in as a literal of the dialect>`
//! (text and decimals as quoted strings, as they are bound).
//! With `--bound`, one line per query for pgbench:
//! `<name>\t<statement with each $n written :bn>[\tbn=<value>]...`, the
//! binds as `pgbench -D` variables, which `-M prepared` sends as parameters.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse::db::{bind_numbered, Db, Dialect, ReadError, ReadLimits, Readers, SqliteReader};
use gatehouse::odata::{
    check_query, parse_query, run_rows, seek_statements, Bind, BodySink, Caller, Cells, EdmType,
    EntitySet, Fetch, Layout, Model, Numbers, ODataError, Page, Position, Property, Scopes, Sink,
    Sql,
};

/// The four reference queries of the peer's `scripts/bench.sh`, as sent in
/// the URL (`/Items?<query>`).
const QUERIES: [(&str, &str); 4] = [
    ("q1-default-page", ""),
    (
        "q2-filter-orderby-top200",
        "$filter=category%20eq%20'cat3'%20and%20price%20gt%2050&$orderby=price%20desc&$top=200",
    ),
    ("q3-count-top50", "$count=true&$top=50"),
    ("q4-skip90000-top100", "$skip=90000&$top=100"),
];

const TASKS: usize = 16;
const THREADS: usize = 2;

/// The `Items` set as `bench/odata.sh` declares it in configuration.
fn model() -> Model {
    Model::new().set(
        EntitySet::new("Items", "items", "ID")
            .property(Property::new("ID", EdmType::Int32).not_null())
            .property(Property::new("name", EdmType::String))
            .property(Property::new("category", EdmType::String))
            .property(Property::new("price", EdmType::Decimal))
            .property(Property::new("quantity", EdmType::Int32))
            .property(Property::new("created", EdmType::DateTimeOffset))
            .property(Property::new("active", EdmType::Boolean))
            .searchable(&["name"])
            .public(true),
    )
}

/// One request's statement: the page, carrying the count when asked.
struct Plan {
    name: &'static str,
    page: Sql,
    /// Whether the last column is `__count`.
    counted: bool,
    /// Rows the page delivers; the statement asks for one more.
    size: u64,
    /// With `--json`: how each row is written into a body.
    json: Option<Layout>,
}

/// Runs one request's statement, every column of every row read. Answers
/// the rows read (the page, plus 1 when the probe row came) and the count.
fn run_once(conn: &rusqlite::Connection, plan: &Plan) -> Result<(u64, Option<i64>), ReadError> {
    let mut total = None;
    let mut stmt = conn.prepare_cached(&plan.page.text)?;
    bind_numbered(&mut stmt, &plan.page.binds)?;
    let columns = stmt.column_count();
    let mut rows = stmt.raw_query();
    let mut n = 0u64;
    // As the service sizes a page's body.
    let mut body = Vec::with_capacity(256 + 64 * plan.size.min(1000) as usize);
    while let Some(row) = rows.next()? {
        if plan.counted && total.is_none() {
            total = Some(row.get::<_, i64>(columns - 1)?);
        }
        // The probe row beyond the page only tells that more rows remain.
        if n == plan.size {
            n += 1;
            break;
        }
        match &plan.json {
            Some(layout) => {
                if n > 0 {
                    body.push(b',');
                }
                layout
                    .write_open(&mut body, row)
                    .map_err(|e| ReadError::Pool(e.message))?;
                body.push(b'}');
            }
            None => {
                for i in 0..columns {
                    std::hint::black_box(row.get_ref(i)?);
                }
            }
        }
        n += 1;
    }
    std::hint::black_box(body);
    Ok((n, total))
}

async fn run_on(reader: &SqliteReader, plan: Arc<Plan>) -> Result<(u64, Option<i64>), ReadError> {
    reader.read(move |conn| run_once(conn, &plan)).await
}

/// Statements per second over `TASKS` tasks for `seconds`, each task
/// running `once` (one request's statement) again and again.
async fn measure<F, Fut, E>(seconds: f64, once: F) -> Result<f64, E>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(), E>> + Send,
    E: Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (once, stop, done) = (once.clone(), stop.clone(), done.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    once().await?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<(), E>(())
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let counted = done.load(Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    for t in tasks {
        t.await.expect("task panicked")?;
    }
    Ok(counted as f64 / elapsed)
}

/// Takes each row as the driver delivers it, reading none of its columns.
struct Delivered;

impl Sink for Delivered {
    fn row(&mut self, _row: &dyn Cells) -> Result<(), ODataError> {
        Ok(())
    }
}

/// Runs one request's statement through the service's bulk reads on a
/// server engine; answers the rows delivered (without the probe row).
async fn run_server(db: &Readers, plan: &Plan) -> Result<u64, ODataError> {
    let page = plan.page.clone();
    match &plan.json {
        Some(layout) => {
            let sink = BodySink {
                layout: layout.clone(),
                body: Vec::with_capacity(256 + 64 * plan.size.min(1000) as usize),
                delivered: 0,
                opened: false,
                out: None,
            };
            let (sink, _) = run_rows(db, page, plan.size, sink).await?;
            std::hint::black_box(&sink.body);
            Ok(sink.delivered)
        }
        None => {
            run_rows(db, page, plan.size, Delivered).await?;
            Ok(plan.size)
        }
    }
}

/// A bound value written as a literal of `dialect`: what a client sending
/// the statement as text (pgbench, mariadb-slap) sends for it.
fn literal(bind: &Bind, dialect: Dialect) -> String {
    let quoted = |t: &str| match dialect {
        // MariaDB's default sql_mode reads a backslash as an escape.
        Dialect::MySql => format!("'{}'", t.replace('\\', "\\\\").replace('\'', "''")),
        _ => format!("'{}'", t.replace('\'', "''")),
    };
    match bind {
        Bind::Bool(b) => match (dialect, b) {
            (Dialect::Sqlite, true) => "1".to_owned(),
            (Dialect::Sqlite, false) => "0".to_owned(),
            (_, true) => "TRUE".to_owned(),
            (_, false) => "FALSE".to_owned(),
        },
        Bind::Int(i) => i.to_string(),
        Bind::Double(d) => match dialect {
            Dialect::Postgres => format!("CAST('{d:?}' AS DOUBLE PRECISION)"),
            _ => format!("{d:e}"),
        },
        Bind::Text(t) | Bind::Decimal(t) => quoted(t),
    }
}

/// `sql` with its placeholders (`$n` on SQLite and PostgreSQL, `?` in
/// order on MySQL) replaced by the binds as literals. Quoted strings and
/// identifiers are left alone.
fn inline(sql: &Sql, dialect: Dialect) -> String {
    rewrite(&sql.text, dialect, |n| {
        let bind = sql.binds.get(n - 1).expect("a bind per placeholder");
        literal(bind, dialect)
    })
}

/// `sql` as a pgbench script line: the placeholder `$n` becomes the
/// variable `:bn`, then one `bn=<value>` per bind for `pgbench -D`. Under
/// `-M prepared` pgbench sends the variables as the statement's parameters,
/// as Gatehouse does, so PostgreSQL prepares, binds and plans the statement
/// exactly as it does Gatehouse's.
fn bound(sql: &Sql, dialect: Dialect) -> String {
    let text = rewrite(&sql.text, dialect, |n| format!(":b{n}"));
    let values = sql.binds.iter().enumerate().map(|(i, bind)| {
        let value = match bind {
            Bind::Bool(b) => b.to_string(),
            Bind::Int(i) => i.to_string(),
            Bind::Double(d) => format!("{d:?}"),
            Bind::Text(t) | Bind::Decimal(t) => t.clone(),
        };
        format!("\tb{}={value}", i + 1)
    });
    std::iter::once(text).chain(values).collect()
}

/// `text` with each placeholder (`$n`, or the n-th `?` on MySQL) replaced
/// by `with(n)`, n counted from 1. Quoted strings and identifiers are left
/// alone.
fn rewrite(text: &str, dialect: Dialect, with: impl Fn(usize) -> String) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    let mut next = 0usize;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => {
                quote = Some(c);
                out.push(c);
            }
            '$' if dialect != Dialect::MySql && chars.peek().is_some_and(char::is_ascii_digit) => {
                let mut n = 0usize;
                while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                    n = n * 10 + d as usize;
                    chars.next();
                }
                out.push_str(&with(n));
            }
            '?' if dialect == Dialect::MySql => {
                next += 1;
                out.push_str(&with(next));
            }
            _ => out.push(c),
        }
    }
    out
}

/// Measures each plan on a server engine through the service's bulk reads.
async fn measure_server_plans(url: &str, plans: &[Arc<Plan>], seconds: f64) -> Result<(), String> {
    let failed = |e: ODataError| e.message;
    let pool = Db::connect(url).await.map_err(|e| e.to_string())?;
    let db = Readers::open(&pool, ReadLimits::default()).map_err(|e| e.to_string())?;
    for plan in plans {
        let rows = run_server(&db, plan).await.map_err(failed)?;
        let once = {
            let (db, plan) = (db.clone(), plan.clone());
            move || {
                let (db, plan) = (db.clone(), plan.clone());
                async move { run_server(&db, &plan).await.map(drop) }
            }
        };
        measure(seconds.min(1.0), once.clone())
            .await
            .map_err(failed)?;
        let qps = measure(seconds, once).await.map_err(failed)?;
        println!("{} qps={qps:.1} rows={rows} count=-", plan.name);
    }
    Ok(())
}

fn main() {
    let (flags, args): (Vec<String>, Vec<String>) =
        std::env::args().skip(1).partition(|a| a.starts_with("--"));
    let json = flags.iter().any(|f| f == "--json");
    let inline_only = flags.iter().any(|f| f == "--inline");
    let bound_only = flags.iter().any(|f| f == "--bound");
    let Some(target) = args.first() else {
        eprintln!(
            "usage: odata_raw <items.db | sqlite://… | postgres://… | mysql://…> [seconds=10] [page_size=1000] [only=q1,q3] [--json] [--inline | --bound]"
        );
        std::process::exit(2);
    };
    let seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let page_size: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let only: Option<Vec<String>> = args
        .get(3)
        .map(|s| s.split(',').map(str::to_owned).collect());
    // A bare path is a SQLite file, opened as Gatehouse is configured to
    // (by its absolute path: `sqlite://` takes no relative one).
    let url = if target.contains("://") {
        target.clone()
    } else {
        let path = std::env::current_dir()
            .map(|d| d.join(target))
            .unwrap_or_else(|_| target.into());
        format!("sqlite://{}?mode=rwc", path.display())
    };
    let dialect = match Dialect::from_url(&url) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };

    let model = model();
    let set = &model.sets[0];
    // Items is public: wrk sends no credentials, so the caller is a guest.
    let scopes = Scopes::for_caller(&model, &Caller::default());
    let plans: Vec<Arc<Plan>> = QUERIES
        .iter()
        .filter(|(name, _)| {
            only.as_ref()
                .is_none_or(|o| o.iter().any(|x| name.starts_with(x.as_str())))
        })
        .map(|(name, qs)| {
            let query = parse_query(qs).expect("reference query parses");
            let checked = check_query(&model, set, &query).expect("reference query fits");
            let page = Page::from_prefer(None, page_size, None).of(&query);
            let fetch = Fetch {
                restriction: None,
                per_value: false,
                internal: Vec::new(),
                page,
                scopes: Some(&scopes),
                count: query.count,
            };
            // As the service plans a page of a set: from the first row, or
            // past `$skip` rows, the order's values selected for the next
            // link; the first statement reads the page.
            let position = (page.offset() == 0).then_some(Position::First);
            let sql = seek_statements(&checked, &fetch, position.as_ref(), dialect)
                .expect("page SQL")
                .swap_remove(0);
            let layout = json.then(|| {
                Layout::new(
                    checked.selected(),
                    &set.key,
                    Vec::new(),
                    None,
                    Numbers::Json,
                )
            });
            Arc::new(Plan {
                name,
                page: sql,
                counted: query.count,
                size: page.rows(),
                json: layout,
            })
        })
        .collect();

    if inline_only || bound_only {
        for plan in &plans {
            let line = if bound_only {
                bound(&plan.page, dialect)
            } else {
                inline(&plan.page, dialect)
            };
            println!("{}\t{line}", plan.name);
        }
        return;
    }
    let work = if json { "SQL and JSON" } else { "SQL" };
    println!("# {target} ({dialect:?}): {work}, {TASKS} tasks on {THREADS} threads, {seconds} s per query, page size {page_size}");
    for plan in &plans {
        println!(
            "# {}: {}  binds {:?}",
            plan.name, plan.page.text, plan.page.binds
        );
    }
    if seconds <= 0.0 {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(THREADS)
        .enable_all()
        .build()
        .expect("runtime");
    let result: Result<(), String> = runtime.block_on(async {
        if dialect != Dialect::Sqlite {
            return measure_server_plans(&url, &plans, seconds).await;
        }
        let db = SqliteReader::for_url(&url, ReadLimits::default())
            .ok_or_else(|| format!("{url} is not a SQLite file"))?;
        for plan in &plans {
            let failed = |e: ReadError| e.to_string();
            let (rows, total) = run_on(&db, plan.clone()).await.map_err(failed)?;
            let once = {
                let (db, plan) = (db.clone(), plan.clone());
                move || {
                    let (db, plan) = (db.clone(), plan.clone());
                    async move { run_on(&db, plan).await.map(drop) }
                }
            };
            // A short warm-up so the page cache and statement caches are hot.
            measure(seconds.min(1.0), once.clone())
                .await
                .map_err(failed)?;
            let qps = measure(seconds, once).await.map_err(failed)?;
            println!(
                "{} qps={qps:.1} rows={rows} count={}",
                plan.name,
                total.map_or("-".to_owned(), |t| t.to_string())
            );
        }
        Ok(())
    });
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

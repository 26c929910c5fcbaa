//! `cargo run -p counter`: the example host on 127.0.0.1:8000 with Rocket's
//! configuration (`Rocket.toml`, `ROCKET_*`).

#[rocket::main]
async fn main() -> std::process::ExitCode {
    match counter::rocket(rocket::Config::figment(), false)
        .launch()
        .await
    {
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: the server could not start: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

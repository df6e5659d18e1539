//! The `proxima` command: the main job on the built-in default scene (`run`), adapter info,
//! geometric queries and benchmarks (`bench`). Run `proxima --help`.

/// `println!`, except that a closed standard output (`proxima run | head`) ends the
/// process quietly, as a reader that has seen enough asks, where `println!` panics.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::say_line(format_args!($($arg)*))
    };
}

mod bench;
mod run;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use proxima::gpu::{ContextOptions, GpuContext};
use proxima::query::QueryEngine;
use proxima::{DeviceChoice, Error, Pipeline, Result};

#[derive(Parser, Debug)]
#[command(
    name = "proxima",
    version,
    about = "GPU + exact CPU collision detection"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the main job on the built-in crowd (the default when no command is given).
    Run(run::RunArgs),
    /// Show the adapter the GPU path would use: backend, limits, timestamp support.
    Info,
    /// Answer geometric queries: JSON Lines in (a file, or stdin), one JSON answer per line.
    Query {
        /// Input file; stdin when absent or `-`.
        file: Option<PathBuf>,
    },
    /// Benchmarks with side-by-side ratios.
    Bench {
        #[command(subcommand)]
        which: bench::BenchCommand,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceArg {
    /// A hardware GPU, else the CPU twins (a software adapter is slower than they are).
    Auto,
    Gpu,
    Cpu,
}

impl From<DeviceArg> for DeviceChoice {
    fn from(d: DeviceArg) -> Self {
        match d {
            DeviceArg::Auto => DeviceChoice::Auto,
            DeviceArg::Gpu => DeviceChoice::Gpu,
            DeviceArg::Cpu => DeviceChoice::Cpu,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(with_default_command(std::env::args_os().collect()));
    let result = match cli.command {
        None => run::run(&run::RunArgs::default()),
        Some(Command::Run(args)) => run::run(&args),
        Some(Command::Info) => info(),
        Some(Command::Query { file }) => query(file.as_deref()),
        Some(Command::Bench { which }) => bench::run(which),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The answers' reader closed its end (`proxima query ... | head`).
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("proxima: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `run` is the default command: `proxima --frames 2` and `proxima scene.toml` are
/// `proxima run --frames 2` and `proxima run scene.toml` (they were refused as an
/// unexpected argument). Help and version stay the top level's.
fn with_default_command(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let first = args.get(1).map(|a| a.to_string_lossy().into_owned());
    if let Some(first) = first {
        let top = matches!(first.as_str(), "-h" | "--help" | "-V" | "--version");
        let command = Cli::command()
            .get_subcommands()
            .any(|c| c.get_name() == first || c.get_all_aliases().any(|a| a == first))
            || first == "help";
        // A scene file by any name (`proxima ./myscene`), a subcommand's name aside.
        let scene = first.ends_with(".toml") || (!command && Path::new(&first).is_file());
        if (first.starts_with('-') && !top) || scene {
            args.insert(1, "run".into());
        }
    }
    args
}

pub fn open_pipeline(device: DeviceArg) -> Result<Pipeline> {
    open_on(device.into())
}

/// The pipeline a bench timing GPU passes beside their twins runs on: any adapter, a
/// software one included, else the twins.
pub fn open_bench_pipeline() -> Result<Pipeline> {
    open_on(DeviceChoice::AnyGpu)
}

fn open_on(choice: DeviceChoice) -> Result<Pipeline> {
    let pipeline = Pipeline::new(choice, &ContextOptions::default())?;
    if let Some(notice) = &pipeline.fallback_notice {
        // On stderr: stdout carries the job's results, the same with or without a GPU.
        eprintln!("proxima: {notice}");
    }
    Ok(pipeline)
}

fn query(file: Option<&Path>) -> Result<()> {
    let mut engine = QueryEngine::new().with_progress();
    let stdout = std::io::stdout().lock();
    let out = std::io::BufWriter::new(stdout);
    let stats = match file {
        Some(path) if path != Path::new("-") => {
            if path.is_dir() {
                return Err(Error::Io {
                    path: path.to_owned(),
                    source: std::io::Error::other("it is a folder, not a file of queries"),
                });
            }
            let f = std::fs::File::open(path).map_err(|source| Error::Io {
                path: path.to_owned(),
                source,
            })?;
            engine.run(std::io::BufReader::new(f), out)?
        }
        _ => engine.run(std::io::stdin().lock(), out)?,
    };
    if stats.errors > 0 {
        // Every line was answered; the exit status tells a script that some were errors.
        return Err(Error::Query(format!(
            "{} of {} lines answered with an error",
            stats.errors, stats.answered
        )));
    }
    Ok(())
}

fn info() -> Result<()> {
    match GpuContext::new(&ContextOptions::default()) {
        Ok(ctx) => {
            say!("{}", ctx.describe());
            // What the default `--device auto` makes of it.
            if DeviceChoice::Auto.runs_on(&ctx) {
                say!("device auto:        this adapter");
            } else {
                say!(
                    "device auto:        the CPU twins (a software adapter is slower than they are; \
                     --device gpu runs on it)"
                );
            }
            Ok(())
        }
        Err(e) if e.is_no_adapter() => {
            say!("proxima: {}", proxima::gpu::fallback_line(&e));
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Fails at once, naming the path, when an output file could not be written where asked
/// (its folder missing, or the path a folder): a long run should not end in that error.
pub fn writable(paths: &[&Path]) -> Result<()> {
    for path in paths {
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let problem = if !folder.is_dir() {
            Some("its folder does not exist")
        } else if path.is_dir() {
            Some("it is a folder")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(Error::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, problem),
            });
        }
        // Opened for writing as the run will (a folder or file without write permission),
        // the file left as it was: one made here is removed again.
        let existed = path.exists();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if !existed {
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(())
}

/// A count of at least 1 (`--bodies`, a bench's `--frames`): a run or a bench size with no
/// bodies has nothing to do (a bench's ratios were 0 over 0), and a table of no frames'
/// medians printed the warm-up's.
fn at_least_one(text: &str) -> std::result::Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("must be a whole number, at least 1".into()),
    }
}

/// Writes one line to standard output ([`say!`]). A reader that closed the pipe has had
/// what it wanted: the process ends there, successfully and without a word.
fn say_line(args: std::fmt::Arguments) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("proxima: error: writing to standard output: {e}");
        std::process::exit(1);
    }
}

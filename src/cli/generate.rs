//! Shell completions (`chainetl completions SHELL`) and man pages
//! (`chainetl man`), generated from the same clap definitions as the
//! parser ([`super::args::Cli`]), so they cannot drift from the flags.

use super::args::Cli;
use super::{CliError, Exit};
use clap::CommandFactory;
use clap_complete::Shell;
use std::path::Path;

/// Writes the completion script for `shell` to stdout.
pub(super) fn completions(shell: Shell) -> Result<Exit, CliError> {
    use clap_complete::Generator as _;
    let mut cmd = Cli::command();
    cmd.set_bin_name("chainetl");
    cmd.build();
    match shell.try_generate(&cmd, &mut std::io::stdout()) {
        // `chainetl completions bash | head` is not a failure.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::io("writing the completion script", e)),
        _ => Ok(Exit::Success),
    }
}

/// The man page (roff) of `chainetl` to stdout, or with `out`, one page
/// per command (`chainetl.1`, `chainetl-run.1`, …) into that directory.
pub(super) fn man(out: Option<&Path>) -> Result<Exit, CliError> {
    let cmd = Cli::command();
    match out {
        None => match clap_mangen::Man::new(cmd).render(&mut std::io::stdout()) {
            // `chainetl man | head` is not a failure.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(CliError::io("writing the man page", e)),
            _ => {}
        },
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| CliError::io(format!("creating {}", dir.display()), e))?;
            clap_mangen::generate_to(cmd, dir).map_err(|e| CliError::io(format!("writing man pages to {}", dir.display()), e))?;
            eprintln!("man pages written to {}", dir.display());
        }
    }
    Ok(Exit::Success)
}

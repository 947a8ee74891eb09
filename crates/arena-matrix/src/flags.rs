//! The command line's overrides of a matrix file (`matrix --only --repeats --stat
//! --noise-pct --seed`), clap arguments behind the `clap` feature (the command line's), so
//! the crate itself builds and tests without clap.

#[cfg(feature = "clap")]
use arena_report::ranges;

use crate::spec::{MatrixSpec, Stat};

/// What a cell shows of its repeats, as `--stat` names it.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum StatArg {
    /// The best run of each cell (highest or lowest, by the file's `better`).
    Best,
    /// The median run of each cell.
    Median,
}

/// `--repeats`: the range a matrix file's `repeats` has.
#[cfg(feature = "clap")]
fn repeats(text: &str) -> Result<u32, String> {
    let most = crate::spec::MAX_REPEATS;
    ranges::whole(text, 1, most, &format!("a whole number from 1 to {most}"))
}

/// The flags that override the matrix file.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SpecFlags {
    /// Run only this case or arm (repeatable); the baseline arm always runs.
    #[cfg_attr(feature = "clap", arg(long, value_name = "CASE|ARM"))]
    pub only: Vec<String>,
    /// Repeats per cell, overriding the file (1 to 1000).
    #[cfg_attr(feature = "clap", arg(long, value_parser = repeats, allow_negative_numbers = true))]
    pub repeats: Option<u32>,
    /// What a cell shows of its repeats, overriding the file.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    pub stat: Option<StatArg>,
    /// Changes under this percent read `~`, overriding the file (default 2; 0 to 100).
    #[cfg_attr(feature = "clap", arg(long, value_name = "PCT", value_parser = ranges::pct_0_100, allow_negative_numbers = true))]
    pub noise_pct: Option<f64>,
    /// Shuffle the order within each round with this seed, overriding the file.
    #[cfg_attr(feature = "clap", arg(long))]
    pub seed: Option<u64>,
}

impl SpecFlags {
    /// Overrides `spec` with the flags given; an `--only` name the file lacks is bad input.
    pub fn apply(&self, spec: &mut MatrixSpec) -> anyhow::Result<()> {
        spec.restrict(&self.only)?;
        if let Some(r) = self.repeats {
            spec.repeats = r;
            let runs = spec.planned_runs();
            if runs > crate::spec::MAX_RUNS {
                return Err(arena_report::Exit::bad_input(format!(
                    "--repeats {r}: the matrix would make {runs} runs (cells x repeats), past the {} one matrix may plan",
                    crate::spec::MAX_RUNS
                ))
                .into());
            }
        }
        if let Some(s) = self.stat {
            spec.stat = match s {
                StatArg::Best => Stat::Best,
                StatArg::Median => Stat::Median,
            };
        }
        if let Some(p) = self.noise_pct {
            spec.noise_pct = p;
        }
        if self.seed.is_some() {
            spec.shuffle_seed = self.seed;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    // The smallest file the reader takes: one arm, one case, wall time.
    const FILE: &str = "title = \"t\"\nbaseline = \"a\"\n[figure]\nkind = \"wall\"\n\
                        [[arm]]\nname = \"a\"\n[[case]]\nname = \"c\"\ncommand = \"true\"\n";

    #[test]
    fn the_flags_given_override_the_file_and_the_rest_stay() {
        let mut spec = crate::spec::parse(Path::new("m.toml"), FILE).unwrap();
        let noise = spec.noise_pct;
        let flags = SpecFlags {
            repeats: Some(5),
            stat: Some(StatArg::Median),
            seed: Some(9),
            ..SpecFlags::default()
        };
        flags.apply(&mut spec).unwrap();
        assert_eq!(spec.repeats, 5);
        assert_eq!(spec.stat, Stat::Median);
        assert_eq!(spec.shuffle_seed, Some(9));
        assert_eq!(spec.noise_pct, noise);
    }

    #[test]
    fn an_unknown_only_name_is_refused() {
        let mut spec = crate::spec::parse(Path::new("m.toml"), FILE).unwrap();
        let flags = SpecFlags {
            only: vec!["nope".into()],
            ..SpecFlags::default()
        };
        assert!(flags.apply(&mut spec).is_err());
    }
}

//! The flags `pilot`, `ab` and `demo` share, as clap parses them: the counts that cannot be
//! 0, `--force` only with `--out`, and `--trace` reaching each command's plan.

use clap::Parser;

use arena_perf::cli::Cli;

#[test]
fn zero_clicks_timeout_capacity_or_rounds_is_a_usage_error() {
    let all: &[&[&str]] = &[&["pilot"], &["ab", "--arms", "a,b"], &["demo"]];
    let cases = ["--clicks", "--timeout", "--capacity"]
        .into_iter()
        .map(|flag| (flag, all))
        .chain([("--rounds", &all[1..])]);
    for (flag, cmds) in cases {
        for cmd in cmds {
            let args = |v: &'static str| {
                let mut a = vec!["arena-perf"];
                a.extend(*cmd);
                a.extend([flag, v]);
                a
            };
            let e = Cli::try_parse_from(args("0")).unwrap_err();
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{cmd:?} {flag}"
            );
            assert!(Cli::try_parse_from(args("1")).is_ok(), "{cmd:?} {flag}");
        }
    }
}

#[test]
fn force_is_accepted_with_out_only() {
    let parse = |a: &[&str]| Cli::try_parse_from([&["arena-perf", "pilot"], a].concat());
    match parse(&["--out", "runs/a", "--force"]).unwrap().command {
        arena_perf::cli::Command::Pilot(p) => assert!(p.force),
        other => panic!("{other:?}"),
    }
    let e = parse(&["--force"]).unwrap_err();
    assert_eq!(e.kind(), clap::error::ErrorKind::MissingRequiredArgument);
}

#[test]
fn trace_reaches_the_plan_of_pilot_ab_and_demo() {
    use arena_perf::cli::Command;
    let all: &[&[&str]] = &[&["pilot"], &["ab", "--arms", "a,b"], &["demo"]];
    for cmd in all {
        for (extra, want) in [(&["--trace"][..], true), (&[][..], false)] {
            let mut a = vec!["arena-perf"];
            a.extend(*cmd);
            a.extend(extra);
            let cli = Cli::try_parse_from(&a).unwrap();
            let run = match cli.command {
                Command::Pilot(p) => p.run,
                Command::Ab(p) => p.run,
                Command::Demo(p) => p.run,
                _ => unreachable!("{a:?}"),
            };
            assert_eq!(run.overrides(None).unwrap().trace, want, "{a:?}");
        }
    }
}

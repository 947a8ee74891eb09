//! Plots are real images: a well-formed SVG and a decodable PNG, with one series per arm.

use arena_compare::plot::{plot, PALETTE};
use arena_compare::synthetic;
use arena_run::{Metric, Run};

fn runs() -> Vec<Run> {
    let mut out = Vec::new();
    for (k, (arm, median)) in [("stock", 60.0), ("lazy-png", 45.0), ("png6", 90.0)]
        .into_iter()
        .enumerate()
    {
        let mut r = synthetic::run(
            arm,
            &synthetic::lognormal(120, median, 0.3, 0.0, k as u64),
            6000,
        );
        // The first click of the page is the cold cliff.
        r.loops[0].cold = true;
        r.loops[0].input_to_paint = Some(840.0);
        out.push(r);
    }
    out
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

#[test]
fn svg_has_one_cdf_line_per_arm_and_marks_cold_clicks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("latency.svg");
    let info = plot(&runs(), Metric::InputToPaint, &out).unwrap();
    assert_eq!(info.series, 3);
    assert_eq!(info.cold_points, 3);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
        "not an SVG"
    );
    // Each arm's colour strokes its CDF polyline (plus its legend sample); no fourth
    // series colour appears.
    for (i, c) in PALETTE.iter().enumerate() {
        let stroked = svg
            .lines()
            .filter(|l| l.contains("<polyline") && l.contains(&hex(*c)))
            .count();
        if i < 3 {
            assert!(stroked >= 1, "arm {i} has no line ({})", hex(*c));
        } else {
            assert!(
                !svg.contains(&hex(*c)),
                "unexpected series colour {}",
                hex(*c)
            );
        }
    }
    assert!(svg.contains("stock (n=119)"), "legend names arm and n");
    assert!(svg.contains("inputToPaint, ms"));
}

#[test]
fn png_decodes_and_shows_each_arm_colour() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("latency.png");
    let info = plot(&runs(), Metric::InputToPaint, &out).unwrap();
    assert_eq!(info.series, 3);
    let decoder = png::Decoder::new(std::fs::File::open(&out).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buf).unwrap();
    assert_eq!((frame.width, frame.height), (1100, 1000));
    let bytes = &buf[..frame.buffer_size()];
    let px = match frame.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected colour type {other:?}"),
    };
    let count = |c: (u8, u8, u8)| {
        bytes
            .chunks_exact(px)
            .filter(|p| (p[0], p[1], p[2]) == c)
            .count()
    };
    for (i, c) in PALETTE.iter().enumerate() {
        if i < 3 {
            assert!(count(*c) > 50, "arm {i} colour barely drawn");
        } else {
            assert_eq!(count(*c), 0, "unexpected series colour {c:?}");
        }
    }
}

#[test]
fn other_extensions_are_bad_input() {
    let err = plot(&runs(), Metric::InputToPaint, std::path::Path::new("x.jpg")).unwrap_err();
    let exit = err.downcast_ref::<arena_report::Exit>().unwrap();
    assert_eq!(exit.kind.code(), 2);
    assert!(exit.message.contains("x.jpg"));
}

//! Plots of a results file, as SVG and PNG (plotters): per grammar, the mask latency CDF of every
//! engine on each tokenizer; and mask latency (p50, p99) against vocabulary size.
//!
//! Text is drawn with a TrueType font read from the system (DejaVu Sans or any `.ttf` under
//! `/usr/share/fonts`), so no font library is linked.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::results::{Results, Run, Status};

const FONT: &str = "sans-serif";

/// One engine's points in a panel: (engine, colour, points).
type Line = (String, RGBColor, Vec<(f64, f64)>);

/// Writes the plots of `results` into `dir`; returns the files written.
pub fn write_all(results: &Results, dir: &Path) -> Result<Vec<PathBuf>, String> {
    register_font()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let engines = engines(results);
    for grammar in results.grammars.iter().map(|g| g.name.as_str()) {
        let panels = results.tokenizers.len().max(1);
        let cols = panels.min(2) as u32;
        let rows = panels.div_ceil(2) as u32;
        let size = (560 * cols, 420 * rows + 40);
        let stem = format!("cdf-{grammar}");
        let title = format!("{grammar}: mask latency CDF (teacher-forced, one thread)");
        let svg = dir.join(format!("{stem}.svg"));
        draw_cdf(
            SVGBackend::new(&svg, size).into_drawing_area(),
            results,
            grammar,
            &engines,
            &title,
        )?;
        let png = dir.join(format!("{stem}.png"));
        draw_cdf(
            BitMapBackend::new(&png, size).into_drawing_area(),
            results,
            grammar,
            &engines,
            &title,
        )?;
        written.extend([svg, png]);
    }
    if results.tokenizers.len() > 1 {
        let cols = results.grammars.len().max(1) as u32;
        let size = (420 * cols, 2 * 380 + 40);
        let svg = dir.join("mask-vs-vocab.svg");
        draw_vocab(
            SVGBackend::new(&svg, size).into_drawing_area(),
            results,
            &engines,
        )?;
        let png = dir.join("mask-vs-vocab.png");
        draw_vocab(
            BitMapBackend::new(&png, size).into_drawing_area(),
            results,
            &engines,
        )?;
        written.extend([svg, png]);
    }
    Ok(written)
}

fn register_font() -> Result<(), String> {
    use std::sync::OnceLock;
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let path = font_path()
                .ok_or("no TrueType font under /usr/share/fonts (install fonts-dejavu-core)")?;
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            // plotters keeps registered fonts for the whole process.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font(FONT, FontStyle::Normal, bytes)
                .map_err(|_| format!("{}: not a usable font", path.display()))
        })
        .clone()
}

fn font_path() -> Option<PathBuf> {
    let preferred = Path::new("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
    if preferred.is_file() {
        return Some(preferred.to_path_buf());
    }
    let mut stack = vec![PathBuf::from("/usr/share/fonts")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "ttf") {
                return Some(p);
            }
        }
    }
    None
}

/// Engines in order of first appearance, each with its colour.
fn engines(results: &Results) -> Vec<(String, RGBColor)> {
    const COLOURS: [RGBColor; 8] = [
        RGBColor(0xd6, 0x27, 0x28),
        RGBColor(0x1f, 0x77, 0xb4),
        RGBColor(0x2c, 0xa0, 0x2c),
        RGBColor(0xff, 0x7f, 0x0e),
        RGBColor(0x94, 0x67, 0xbd),
        RGBColor(0x8c, 0x56, 0x4b),
        RGBColor(0xe3, 0x77, 0xc2),
        RGBColor(0x17, 0xbe, 0xcf),
    ];
    let mut out: Vec<(String, RGBColor)> = Vec::new();
    for r in &results.runs {
        if !out.iter().any(|(e, _)| e == &r.engine) {
            let colour = COLOURS[out.len() % COLOURS.len()];
            out.push((r.engine.clone(), colour));
        }
    }
    out
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("plotting: {e:?}")
}

fn ok_run<'r>(
    results: &'r Results,
    grammar: &str,
    engine: &str,
    tokenizer: &str,
) -> Option<&'r Run> {
    results.runs.iter().find(|r| {
        r.grammar == grammar
            && r.engine == engine
            && r.tokenizer == tokenizer
            && r.status == Status::Ok
            && r.mask.is_some()
    })
}

fn draw_cdf<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    results: &Results,
    grammar: &str,
    engines: &[(String, RGBColor)],
    title: &str,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, (FONT, 22).into_font()).map_err(err)?;
    let cols = results.tokenizers.len().clamp(1, 2);
    let rows = results.tokenizers.len().div_ceil(2).max(1);
    let panels = root.split_evenly((rows, cols));
    for (panel, tokenizer) in panels.iter().zip(&results.tokenizers) {
        let runs: Vec<(&Run, RGBColor)> = engines
            .iter()
            .filter_map(|(e, c)| ok_run(results, grammar, e, &tokenizer.name).map(|r| (r, *c)))
            .collect();
        let (lo, hi) = runs
            .iter()
            .flat_map(|(r, _)| r.mask_cdf.iter().map(|p| p[0]))
            .fold((f64::MAX, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
        let (lo, hi) = if runs.is_empty() {
            (1.0, 10.0)
        } else {
            (
                10f64.powf(lo.max(0.01).log10().floor()),
                10f64.powf(hi.max(0.1).log10().ceil()),
            )
        };
        let caption = format!(
            "{} ({}k ids)",
            tokenizer.name,
            tokenizer.vocab_size.div_ceil(1000)
        );
        let mut chart = ChartBuilder::on(panel)
            .caption(caption, (FONT, 17).into_font())
            .margin(8)
            .x_label_area_size(36)
            .y_label_area_size(44)
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("mask latency, µs (log)")
            .y_desc("fraction of masks")
            .label_style((FONT, 13).into_font())
            .axis_desc_style((FONT, 14).into_font())
            .x_label_formatter(&|x| format_tick(*x))
            .draw()
            .map_err(err)?;
        for (run, colour) in &runs {
            let colour = *colour;
            let label = if run.grammar_copy == "adapted" {
                format!("{} (adapted)", run.engine)
            } else {
                run.engine.clone()
            };
            chart
                .draw_series(LineSeries::new(
                    run.mask_cdf.iter().map(|p| (p[0], p[1])),
                    colour.stroke_width(2),
                ))
                .map_err(err)?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                });
        }
        if !runs.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.4))
                .label_font((FONT, 13).into_font())
                .draw()
                .map_err(err)?;
        }
    }
    root.present().map_err(err)
}

fn draw_vocab<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    results: &Results,
    engines: &[(String, RGBColor)],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let root = root
        .titled(
            "Mask latency against vocabulary size (top: p50, bottom: p99)",
            (FONT, 22).into_font(),
        )
        .map_err(err)?;
    let cols = results.grammars.len().max(1);
    let panels = root.split_evenly((2, cols));
    let max_vocab = results
        .tokenizers
        .iter()
        .map(|t| t.vocab_size)
        .max()
        .unwrap_or(1) as f64
        / 1000.0;
    for (row, pick) in [
        (
            0usize,
            (|r: &Run| r.mask.map_or(0.0, |m| m.p50_us)) as fn(&Run) -> f64,
        ),
        (1, |r: &Run| r.mask.map_or(0.0, |m| m.p99_us)),
    ] {
        for (col, grammar) in results.grammars.iter().enumerate() {
            let panel = &panels[row * cols + col];
            let mut lines: Vec<Line> = Vec::new();
            for (engine, colour) in engines {
                let points: Vec<(f64, f64)> = results
                    .tokenizers
                    .iter()
                    .filter_map(|t| {
                        let r = ok_run(results, &grammar.name, engine, &t.name)?;
                        Some((t.vocab_size as f64 / 1000.0, pick(r).max(0.001)))
                    })
                    .collect();
                if !points.is_empty() {
                    lines.push((engine.clone(), *colour, points));
                }
            }
            let (lo, hi) = lines
                .iter()
                .flat_map(|(_, _, p)| p.iter().map(|q| q.1))
                .fold((f64::MAX, 0.0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
            let (lo, hi) = if lines.is_empty() {
                (1.0, 10.0)
            } else {
                (
                    10f64.powf(lo.log10().floor()),
                    10f64.powf(hi.max(lo * 1.01).log10().ceil()),
                )
            };
            let mut chart = ChartBuilder::on(panel)
                .caption(
                    format!(
                        "{} — {}",
                        grammar.name,
                        if row == 0 { "p50" } else { "p99" }
                    ),
                    (FONT, 16).into_font(),
                )
                .margin(8)
                .x_label_area_size(34)
                .y_label_area_size(48)
                .build_cartesian_2d(0.0..(max_vocab * 1.05), (lo..hi).log_scale())
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("vocabulary, thousands of ids")
                .y_desc("µs (log)")
                .label_style((FONT, 12).into_font())
                .axis_desc_style((FONT, 13).into_font())
                .y_label_formatter(&|y| format_tick(*y))
                .draw()
                .map_err(err)?;
            for (engine, colour, points) in lines {
                chart
                    .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
                    .map_err(err)?
                    .label(engine)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                    });
                chart
                    .draw_series(
                        points
                            .into_iter()
                            .map(|p| Circle::new(p, 3, colour.filled())),
                    )
                    .map_err(err)?;
            }
            if row == 0 && col == 0 {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperLeft)
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK.mix(0.4))
                    .label_font((FONT, 12).into_font())
                    .draw()
                    .map_err(err)?;
            }
        }
    }
    root.present().map_err(err)
}

/// A log-axis tick: `0.1`, `1`, `10`, `1k`, `1M`.
fn format_tick(x: f64) -> String {
    if x >= 1e6 {
        format!("{}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{}k", x / 1e3)
    } else if x >= 1.0 {
        format!("{}", x.round())
    } else {
        format!("{x}")
    }
}

//! `innosim report --quick` renders in a real browser: the page is written,
//! headless Chromium (Debian's, installed by `tests/tools/setup-clients.sh`)
//! loads it, every chart in the DOM it builds has marks with a size, and
//! its screenshot shows the bars drawn in the charts' colours.

use std::path::Path;
use std::process::Command;

const CHARTS: [&str; 7] = [
    "flush",
    "deadlocks",
    "scaling",
    "tests",
    "sizes",
    "index",
    "simulator",
];

fn chromium() -> String {
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).exists() {
            return p.to_string();
        }
    }
    panic!("chromium is missing: `bash tests/tools/setup-clients.sh` installs it");
}

/// Runs headless Chromium on `url` with `args`, as the machine's notes say
/// it must run here (no sandbox as root, no background networking).
fn headless(profile: &Path, args: &[&str], url: &str) -> std::process::Output {
    let out = Command::new("timeout")
        .arg("180")
        .arg(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The values of `attr` in the elements of `dom` that start with `tag`.
fn attrs<'a>(dom: &'a str, tag: &str, attr: &str) -> Vec<&'a str> {
    dom.split(tag)
        .skip(1)
        .filter_map(|rest| {
            let end = rest.find('>')?;
            let head = &rest[..end];
            let at = head.find(&format!("{attr}=\""))? + attr.len() + 2;
            let len = head[at..].find('"')?;
            Some(&head[at..at + len])
        })
        .collect()
}

/// The `<title>` text of each element of `dom` that starts with `tag`.
fn titles<'a>(dom: &'a str, tag: &str) -> Vec<&'a str> {
    dom.split(tag)
        .skip(1)
        .filter_map(|rest| {
            let at = rest.find("<title>")? + "<title>".len();
            let len = rest[at..].find("</title>")?;
            Some(&rest[at..at + len])
        })
        .collect()
}

#[test]
fn the_report_renders_every_chart_in_a_browser() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = Command::new(env!("CARGO_BIN_EXE_innosim"))
        .args(["report", "--quick", "--out"])
        .arg(dir.path())
        .output()
        .expect("innosim runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = dir.path().join("index.html");
    let html = std::fs::read_to_string(&page).expect("the page is written");
    assert!(!html.contains("<script"), "self-contained, no script");
    for fetch in ["src=\"http", "href=\"http", "url(http"] {
        assert!(
            !html.contains(fetch),
            "nothing fetched from elsewhere: {fetch}"
        );
    }
    let url = format!("file://{}", page.display());
    let profile = dir.path().join("chromium-profile");
    // The DOM the browser built: every chart, each with marks of some size.
    let dom = String::from_utf8(headless(&profile, &["--dump-dom"], &url).stdout)
        .expect("the DOM is text");
    for id in CHARTS {
        let at = dom
            .find(&format!("data-chart=\"{id}\""))
            .unwrap_or_else(|| panic!("chart {id} missing from the DOM"));
        let svg = &dom[at..at + dom[at..].find("</svg>").expect("the chart ends")];
        // innosim's own marks (a seed's figures are drawn beside them, and
        // must not be what makes a chart pass): bars with a height, lines
        // through two points or more, of a series not named for a seed.
        let bars = attrs(svg, "<rect class=\"bar\"", "height");
        let bar_titles = titles(svg, "<rect class=\"bar\"");
        let lines = attrs(svg, "<polyline class=\"line\"", "points");
        let line_titles = titles(svg, "<polyline class=\"line\"");
        assert_eq!(
            bars.len(),
            bar_titles.len(),
            "chart {id}: a bar without a title"
        );
        assert_eq!(
            lines.len(),
            line_titles.len(),
            "chart {id}: a line without a title"
        );
        let own = |title: &str| !title.contains("seeds/");
        let drawn = bars
            .iter()
            .zip(&bar_titles)
            .filter(|(h, t)| own(t) && h.parse::<f64>().expect("a number") > 0.0)
            .count()
            + lines
                .iter()
                .zip(&line_titles)
                .filter(|(p, t)| own(t) && p.split(' ').count() >= 2)
                .count();
        assert!(
            drawn > 0,
            "chart {id} has no mark of innosim's with a size: {svg}"
        );
    }
    // What it drew: the screenshot has the first series' blue and the
    // seeds' red over a good part of it.
    let shot = dir.path().join("shot.png");
    headless(
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=900,3600",
        ],
        &url,
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&shot).expect("a screenshot"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let pixels = &buf[..info.buffer_size()];
    let count = |rgb: [u8; 3]| pixels.chunks(channels).filter(|p| p[..3] == rgb).count();
    let blue = count([0x1f, 0x77, 0xb4]);
    let red = count([0xd6, 0x27, 0x28]);
    let total = (info.width * info.height) as usize;
    assert!(blue > total / 500, "{blue} blue pixels of {total}");
    assert!(red > total / 2000, "{red} red pixels of {total}");
}

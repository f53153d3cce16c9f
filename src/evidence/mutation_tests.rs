//! Every reader against every public text of the corpus, cut and mixed the ways pastes are.
//!
//! A hidden set of real text judges gpufix, and a reader that panics on one of them ends the
//! whole run. The readers' own proptests feed each reader its own grammar; this feeds every
//! reader every corpus text (not only its own kind), each also cut at a point inside a line,
//! with a run of lines dropped, glued to another artifact, and quoted line by line, through
//! the same steps `--evidence` takes: [`crate::vocab::paste::unwrap`], [`super::segment`], each
//! part's `parse` and `host`, and the job-text readers. The cuts come from a fixed-seed
//! generator, so a failure names its artifact and mutation and repeats.

use super::{KINDS, segment};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// xorshift64*: a fixed sequence, no dependency, enough to choose cut points.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// The char boundary at or before `i`.
fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn corpus_texts() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            !n.ends_with(".label.yaml") && n != "README.md" && !n.ends_with(".gz")
        })
        .collect();
    names.sort();
    for p in names {
        let bytes = std::fs::read(&p).unwrap();
        out.push((
            p.file_name().unwrap().to_string_lossy().into_owned(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    out
}

/// The mutations of one text: a cut inside a line, a dropped run of lines, the text glued to
/// another artifact, every line quoted as a chat or a rank prefix carries it.
fn mutations(text: &str, other: &str, rng: &mut Rng) -> Vec<(&'static str, String)> {
    let cut = floor(text, rng.below(text.len() + 1));
    let lines: Vec<&str> = text.lines().collect();
    let a = rng.below(lines.len());
    let b = (a + 1 + rng.below(8)).min(lines.len());
    let dropped: String = lines[..a]
        .iter()
        .chain(lines[b..].iter())
        .map(|l| format!("{l}\n"))
        .collect();
    let half = floor(other, rng.below(other.len() + 1));
    let prefix = ["> ", "[rank3]: ", "    ", "| "][rng.below(4)];
    let quoted: String = lines.iter().map(|l| format!("{prefix}{l}\n")).collect();
    vec![
        ("cut", text[..cut].to_string()),
        ("tail", text[cut..].to_string()),
        ("dropped", dropped),
        ("glued", format!("{}\n{}", &other[..half], text)),
        ("quoted", quoted),
    ]
}

/// What `--evidence` does with a text, every result thrown away: only a panic fails.
fn read_as_evidence(text: &str) {
    let text = crate::vocab::paste::unwrap(text.to_string());
    let reading = segment::segment(&text);
    for part in &reading.parts {
        let _ = part.kind.parse(&part.text);
        let _ = part.kind.host(&part.text);
    }
    let _ = crate::formats::job_text::detect(&text);
    let _ = crate::formats::job_text::log_warnings(&text);
    let _ = crate::formats::job_text::step_timings(&text);
    let _ = crate::formats::job_text::interrupted_in_loader(&text);
    let _ = crate::formats::job_text::lightning_profiler_report(&text);
    let _ = crate::formats::job_text::single_process_loader(&text);
    let _ = crate::formats::profiler_report::torch_table_loader(&text);
    let _ = crate::formats::profiler_report::torch_table_pageable(&text);
    let _ = crate::formats::profiler_report::pstats_loader(&text);
    let _ = crate::formats::profiler_report::pstats_fetch_row(&text);
    let _ = crate::formats::job_text::parse_structured(&text);
    let _ = crate::formats::hf_args::find(&text);
    let _ = crate::evidence::segment::is_prose(&text);
}

#[test]
fn every_reader_reads_every_corpus_text_cut_and_mixed_without_panicking() {
    let texts = corpus_texts();
    assert!(texts.len() > 500, "corpus not found: {}", texts.len());
    let started = Instant::now();
    // the texts are shared out over the CPUs (text i to thread i mod n); each text's cuts come
    // from its own fixed seed, so a failure names its artifact and mutation and repeats however
    // many threads run
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let slowest = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let texts = &texts;
                s.spawn(move || {
                    let mut slowest = (Duration::ZERO, String::new());
                    for (i, (name, text)) in texts.iter().enumerate().skip(t).step_by(threads) {
                        let mut rng =
                            Rng(0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1).wrapping_mul(0x2545_f491));
                        let other = &texts[(i * 7 + 13) % texts.len()].1;
                        for (how, m) in std::iter::once(("whole", text.clone()))
                            .chain(mutations(text, other, &mut rng))
                        {
                            let t = Instant::now();
                            let r = std::panic::catch_unwind(|| {
                                read_as_evidence(&m);
                                // every reader on every text, not only the one detection picks: a
                                // paste's part can reach any reader through `segment`'s joins.
                                // Large texts are read by their own kind above; the sweep keeps
                                // the test's time bounded.
                                if m.len() <= 16 * 1024 {
                                    for k in KINDS {
                                        let _ = k.parse(&m);
                                        let _ = k.host(&m);
                                    }
                                }
                            });
                            assert!(
                                r.is_ok(),
                                "a reader panicked on `{name}`, mutation `{how}` ({} bytes)",
                                m.len()
                            );
                            let took = t.elapsed();
                            if took > slowest.0 {
                                slowest = (took, format!("{name} ({how}, {} bytes)", m.len()));
                            }
                        }
                    }
                    slowest
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a reader panicked (see above)"))
            .max_by_key(|s| s.0)
            .unwrap_or_default()
    });
    // bounded time: no text (of at most a few hundred KB) may take seconds, even unoptimised
    // and with the other threads busy
    assert!(
        slowest.0 < Duration::from_secs(20),
        "slowest: {} took {:?}",
        slowest.1,
        slowest.0
    );
    eprintln!(
        "{} corpus texts, 6 forms each, on {threads} threads in {:?}; slowest {} in {:?}",
        texts.len(),
        started.elapsed(),
        slowest.1,
        slowest.0
    );
}

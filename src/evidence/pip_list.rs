//! `pip list` and `pip freeze` output: the installed packages and their versions, and from the
//! `torch` row the CUDA (or ROCm) build the wheel was made for (`2.9.1+cu128`: CUDA 12.8;
//! `+cpu`: no CUDA at all). Written from pip's `src/pip/_internal/commands/list.py` (pypa/pip
//! 24–25, `format_for_columns`/`format_list_columns` and `output_package_listing_columns`):
//! the columns format prints a header `Package Version` (then `Latest Type` with
//! `--outdated`, `Build`, `Editable project location`, `Location Installer` with `-v`), a
//! separator of dashes per column joined by single spaces, and one row per package, each cell
//! left-justified to its column (`tabulate`); the freeze format prints `name==version` (or
//! `name @ URL`) per line. People paste a few rows of either, often without the header, so
//! rows alone are read when one of them names a package of the GPU stack (torch, its CUDA
//! libraries, JAX, TensorFlow, CuPy, Triton …); a two-column text that names none is not
//! claimed. No rule reads the list yet: it is recognised, so a paste of versions is not "cannot
//! tell what this is", and its torch build is named in the report.

use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Package {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PipList {
    /// `columns` (`pip list`) or `freeze` (`pip freeze`), whichever most rows are.
    pub format: String,
    /// The header line was pasted.
    pub header: bool,
    pub packages: Vec<Package>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_version: Option<String>,
    /// The CUDA the torch wheel was built for, from its local version (`+cu128` → `12.8`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_cuda: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_rocm: Option<String>,
    /// The torch wheel is the CPU-only build (`+cpu`).
    pub cpu_only_build: bool,
}

/// Packages whose presence makes two columns of names and versions a package list.
const GPU_STACK: &[&str] = &[
    "torch",
    "torchvision",
    "torchaudio",
    "pytorch-lightning",
    "lightning",
    "triton",
    "xformers",
    "flash-attn",
    "flash_attn",
    "deepspeed",
    "vllm",
    "jax",
    "jaxlib",
    "tensorflow",
    "tensorflow-gpu",
    "cupy",
    "onnxruntime-gpu",
    "tensorrt",
    "transformers",
    "accelerate",
];

fn is_gpu_stack(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    GPU_STACK.contains(&n.as_str())
        || n.starts_with("nvidia-")
        || n.starts_with("cupy-cuda")
        || n.starts_with("jax-cuda")
}

/// A distribution name as pip prints it (PEP 508 names: letters, digits, `.`, `_`, `-`).
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// PEP 440's version grammar, as `packaging` writes it (`packaging/version.py`,
/// `VERSION_PATTERN`, packaging 24; matched case-insensitively, whole): pip prints what
/// `packaging.version.Version` parses, so a cell that does not match is not a version.
static VERSION: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(concat!(
        r"(?i)^v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*",
        r"(?:[-_.]?(?:alpha|a|beta|b|preview|pre|c|rc)[-_.]?[0-9]*)?",
        r"(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?",
        r"(?:[-_.]?dev[-_.]?[0-9]*)?",
        r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$",
    ))
    .expect("static regex")
});

/// A version as pip prints it: PEP 440, with a local part (`2.9.1+cu128`).
fn is_version(s: &str) -> bool {
    s.len() <= 100 && VERSION.is_match(s)
}

/// One row: (name, version, freeze format?).
fn row(line: &str) -> Option<(&str, &str, bool)> {
    let l = line.trim();
    if let Some((n, v)) = l.split_once("==") {
        let (n, v) = (n.trim(), v.trim());
        return (is_name(n) && is_version(v)).then_some((n, v, true));
    }
    let mut cells = l.split_whitespace();
    let (n, v) = (cells.next()?, cells.next()?);
    // further cells only where pip prints them: Latest/Type, Build, a location (a path)
    let rest: Vec<&str> = cells.collect();
    let rest_ok = rest.len() <= 3
        && rest.iter().all(|c| {
            is_version(c) || matches!(*c, "wheel" | "sdist" | "pip" | "conda") || c.contains('/')
        });
    (is_name(n) && is_version(v) && rest_ok).then_some((n, v, false))
}

fn header(line: &str) -> bool {
    let mut w = line.split_whitespace();
    w.next() == Some("Package") && w.next() == Some("Version")
}

/// The CUDA or ROCm build of a torch version's local part.
fn build_of(version: &str) -> (Option<String>, Option<String>, bool) {
    let Some((_, local)) = version.split_once('+') else {
        return (None, None, false);
    };
    if local == "cpu" {
        return (None, None, true);
    }
    if let Some(code) = super::cuda_compat::cuda_code(local).filter(|_| local.starts_with("cu")) {
        return (Some(super::cuda_compat::cuda_code_str(code)), None, false);
    }
    if let Some(r) = local.strip_prefix("rocm") {
        return (None, Some(super::clip(r, 20)), false);
    }
    (None, None, false)
}

/// True when `text` holds a package list: two rows or more and a GPU-stack package among them,
/// or pip's header with a row under it.
pub fn looks_like_pip_list(text: &str) -> bool {
    let mut rows = 0;
    let mut gpu = false;
    let mut head = false;
    for l in text.lines().take(2000) {
        if header(l) {
            head = true;
        } else if let Some((n, _, _)) = row(l) {
            rows += 1;
            gpu |= is_gpu_stack(n);
        }
        if rows >= 2 && gpu || head && rows >= 1 {
            return true;
        }
    }
    false
}

pub fn parse_pip_list(text: &str) -> PipList {
    let mut p = PipList::default();
    let (mut freeze, mut columns) = (0, 0);
    for l in text.lines() {
        if header(l) {
            p.header = true;
            continue;
        }
        let Some((n, v, fz)) = row(l) else { continue };
        if fz {
            freeze += 1;
        } else {
            columns += 1;
        }
        if n.eq_ignore_ascii_case("torch") && p.torch_version.is_none() {
            p.torch_version = Some(v.to_string());
            (p.torch_cuda, p.torch_rocm, p.cpu_only_build) = build_of(v);
        }
        if p.packages.len() < super::MAX_ITEMS {
            p.packages.push(Package {
                name: n.to_string(),
                version: v.to_string(),
            });
        }
    }
    p.format = if freeze > columns {
        "freeze"
    } else {
        "columns"
    }
    .into();
    p
}

pub struct PipListKind;

impl super::EvidenceKind for PipListKind {
    fn name(&self) -> &'static str {
        "pip-list"
    }
    fn doc(&self) -> &'static str {
        "pip list or pip freeze output: the installed packages, and the CUDA build of the torch wheel"
    }
    fn example(&self) -> &'static str {
        "pip list | grep -i -e torch -e nvidia"
    }
    fn fields(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("format", "columns (pip list) or freeze (pip freeze)"),
            ("header", "pip's `Package Version` header was pasted"),
            ("packages", "rows: name, version"),
            ("torch_version", "the torch row's version"),
            (
                "torch_cuda",
                "the CUDA the torch wheel was built for, from its local part (+cu128: 12.8)",
            ),
            (
                "torch_rocm",
                "the ROCm the torch wheel was built for (+rocm6.0)",
            ),
            (
                "cpu_only_build",
                "the torch wheel is the CPU-only build (+cpu)",
            ),
        ]
    }
    fn read_by(&self) -> &'static [&'static str] {
        &[]
    }
    fn detect(&self, s: &super::Sniff) -> bool {
        looks_like_pip_list(s.unquoted)
    }
    fn parse(&self, text: &str) -> Result<serde_json::Value, super::ParseError> {
        super::to_value(&parse_pip_list(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_list_rows_with_and_without_the_header() {
        // kzhang2/aoneus#2 (the whole issue body): two pip rows and two lines of the poster's
        let aoneus = "torch             2.9.1+cu128\ntorchvision       0.24.1+cu128\nDriver 13.0\nCUDA toolkit 12.8\n";
        assert!(looks_like_pip_list(aoneus));
        let p = parse_pip_list(aoneus);
        assert_eq!(p.torch_version.as_deref(), Some("2.9.1+cu128"));
        assert_eq!(p.torch_cuda.as_deref(), Some("12.8"));
        assert!(!p.cpu_only_build && !p.header);
        assert_eq!(p.format, "columns");
        // pip's own layout: header, dashes, rows left-justified (list.py `tabulate`)
        let listed = "Package                  Version\n------------------------ ------------\nnvidia-cublas-cu12       12.1.3.1\ntorch                    2.1.0+cpu\n";
        assert!(looks_like_pip_list(listed));
        let p = parse_pip_list(listed);
        assert!(p.header && p.cpu_only_build);
        // the two-digit tags of old wheels (`+cu92`) read as cuda_compat reads them
        assert_eq!(
            parse_pip_list("torch==1.5.1+cu92\ntorchvision==0.6.1+cu92\n")
                .torch_cuda
                .as_deref(),
            Some("9.2")
        );
        assert_eq!(p.packages.len(), 2);
        // pip freeze
        let frozen = "numpy==1.26.4\ntorch==2.3.1+rocm6.0\n";
        let p = parse_pip_list(frozen);
        assert!(looks_like_pip_list(frozen));
        assert_eq!(
            (p.format.as_str(), p.torch_rocm.as_deref()),
            ("freeze", Some("6.0"))
        );
    }

    #[test]
    fn versions_are_pep_440() {
        for v in [
            "2.9.1+cu128",
            "0.24.1+cu128",
            "2.6.0.dev20241112+cu124",
            "2.1.0a0+32f93b1",
            "1.0.0rc1",
            "23.1.post1",
            "1!2.0",
            "v1.2",
            "12.1.3.1",
        ] {
            assert!(is_version(v), "{v}");
        }
        for v in [
            "3yY11G1n1rGQwsBD",
            "2.1.0+",
            "1..2",
            "2.x",
            "",
            "1.0+cu12/8",
        ] {
            assert!(!is_version(v), "{v}");
        }
        // lines of `torch <base64>` (a hostile paste) are no package list
        let junk = "torch 3yY11G1n1rGQwsBDfbZgUMCXIQhwTvi98z0iI2ZUQU7F\ntorch 9ZBZ7YqsnDW7icZ\n";
        assert!(!looks_like_pip_list(junk));
    }

    #[test]
    fn two_columns_without_a_gpu_package_or_prose_are_not_a_package_list() {
        assert!(!looks_like_pip_list("Driver 13.0\nCUDA toolkit 12.8\n"));
        assert!(!looks_like_pip_list("requests 2.31.0\nurllib3 2.0.7\n"));
        assert!(!looks_like_pip_list(
            "I installed torch 2.1 yesterday\nand it fails with CUDA 12.1 now\n"
        ));
        // collect_env's package lines are collect_env's
        assert!(!looks_like_pip_list(
            "[pip3] torch==2.1.0\n[pip3] triton==2.1.0\n"
        ));
    }
}

//! GPU product names, as the NVIDIA driver reports them (`nvidia-smi`'s tables, `-q`'s `Product
//! Name`, `-L`, `--query-gpu=name`; `torch.cuda.get_device_name()`, which collect_env, ComfyUI
//! and sglang print), to the GPU's compute capability, written `sm_XX` (major * 10 + minor).
//!
//! Sources (read 2026-12): NVIDIA, "CUDA GPUs - Compute Capability",
//! <https://developer.nvidia.com/cuda-gpus> (the data-centre, workstation, GeForce and Jetson
//! tables), and the CUDA C++ Programming Guide's "Compute Capabilities" appendix (which
//! architecture each major.minor is), <https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-capabilities>.
//! Only names whose capability those tables give are here; a name not in the table yields
//! nothing (the readers never guess an architecture from a name's shape).
//!
//! How the driver spells names: recent drivers put `NVIDIA ` before every name (`NVIDIA GeForce
//! RTX 5090`, `NVIDIA A100-SXM4-80GB`, `NVIDIA H100 80GB HBM3`); older ones print `GeForce RTX
//! 3080`, `Tesla V100-SXM2-32GB`, `A100-SXM4-40GB`, `Quadro RTX 6000`, `TITAN RTX`. Variants of one
//! model (Ti, SUPER, D, Laptop GPU, memory sizes, form factors) share its capability, so a key is
//! a model's name and matches when the text goes on with something other than a letter or digit.
//! `nvidia-smi`'s table cuts a long name to its column and ends it with `...`
//! (`NVIDIA GeForce RTX 40...`): such a stub is resolved only when every model it could be has
//! the same capability (`NVIDIA GeForce ...` could be any GeForce: nothing).

/// (name as printed, without the `NVIDIA ` the driver may put first; sm). Where a name is a prefix
/// of another (`A10` of `A100`), the boundary rule keeps them apart; the longest key wins.
const TABLE: &[(&str, u32)] = &[
    // --- data centre (developer.nvidia.com/cuda-gpus, "Data Center Products") ---
    // 12.1: "NVIDIA GB10 (DGX Spark)", the name the driver prints (pytorch/pytorch#172629)
    ("GB10", 121),
    // 11.0: "Jetson T5000, Jetson T4000" (Jetson AGX Thor) under CUDA 13, whose driver names the
    // GPU `NVIDIA Thor` (collect_env in vllm-project/vllm#34470)
    ("Thor", 110),
    ("B300", 103),
    ("GB300", 103),
    ("B200", 100),
    ("B100", 100),
    ("GB200", 100),
    ("H200", 90),
    ("H100", 90),
    ("H800", 90),
    ("H20", 90),
    ("GH200", 90),
    ("L40S", 89),
    ("L40", 89),
    ("L20", 89),
    ("L4", 89),
    ("A100", 80),
    ("A800", 80),
    ("A30", 80),
    ("A40", 86),
    ("A16", 86),
    ("A10G", 86),
    ("A10", 86),
    ("A2", 86),
    ("Tesla T4", 75),
    ("T4", 75),
    ("Tesla V100", 70),
    ("Tesla V100S", 70),
    ("V100", 70),
    ("Tesla P100", 60),
    ("Tesla P40", 61),
    ("Tesla P4", 61),
    ("Tesla M60", 52),
    ("Tesla M40", 52),
    ("Tesla M4", 52),
    ("Tesla M10", 50),
    ("Tesla K80", 37),
    ("Tesla K40", 35),
    ("Tesla K40m", 35),
    ("Tesla K20", 35),
    ("Tesla K20m", 35),
    // --- workstation ---
    ("RTX PRO 6000", 120),
    ("RTX PRO 5000", 120),
    ("RTX PRO 4500", 120),
    ("RTX PRO 4000", 120),
    ("RTX PRO 2000", 120),
    ("RTX 6000 Ada", 89),
    ("RTX 5000 Ada", 89),
    ("RTX 4500 Ada", 89),
    ("RTX 4000 Ada", 89),
    ("RTX 4000 SFF Ada", 89),
    ("RTX 2000 Ada", 89),
    ("RTX A6000", 86),
    ("RTX A5500", 86),
    ("RTX A5000", 86),
    ("RTX A4500", 86),
    ("RTX A4000", 86),
    ("RTX A3000", 86),
    ("RTX A2000", 86),
    // the page's earlier "NVIDIA Quadro and NVIDIA RTX Desktop GPUs" table (T1000, T600, T400)
    ("T1000", 75),
    ("T600", 75),
    ("T400", 75),
    ("Quadro RTX 8000", 75),
    ("Quadro RTX 6000", 75),
    ("Quadro RTX 5000", 75),
    ("Quadro RTX 4000", 75),
    ("Quadro GV100", 70),
    ("Quadro GP100", 60),
    ("Quadro P6000", 61),
    ("Quadro P5000", 61),
    ("Quadro P4000", 61),
    ("Quadro P2000", 61),
    ("Quadro M6000", 52),
    ("TITAN RTX", 75),
    ("TITAN V", 70),
    ("TITAN Xp", 61),
    ("TITAN X (Pascal)", 61),
    ("GeForce GTX TITAN X", 52),
    // --- GeForce ---
    ("GeForce RTX 5090", 120),
    ("GeForce RTX 5080", 120),
    ("GeForce RTX 5070", 120),
    ("GeForce RTX 5060", 120),
    ("GeForce RTX 5050", 120),
    ("GeForce RTX 4090", 89),
    ("GeForce RTX 4080", 89),
    ("GeForce RTX 4070", 89),
    ("GeForce RTX 4060", 89),
    ("GeForce RTX 4050", 89),
    ("GeForce RTX 3090", 86),
    ("GeForce RTX 3080", 86),
    ("GeForce RTX 3070", 86),
    ("GeForce RTX 3060", 86),
    ("GeForce RTX 3050", 86),
    ("GeForce RTX 2080", 75),
    ("GeForce RTX 2070", 75),
    ("GeForce RTX 2060", 75),
    ("GeForce GTX 1660", 75),
    ("GeForce GTX 1650", 75),
    ("GeForce GTX 1080", 61),
    ("GeForce GTX 1070", 61),
    ("GeForce GTX 1060", 61),
    ("GeForce GTX 1050", 61),
    ("GeForce GT 1030", 61),
    ("GeForce GTX 980", 52),
    ("GeForce GTX 970", 52),
    ("GeForce GTX 960", 52),
    ("GeForce GTX 950", 52),
    ("GeForce GTX 750", 50),
];

/// Keys a bare model number could be confused with in prose unless the driver's `NVIDIA ` (or
/// `Tesla `) is before it: a data-centre name is taken only as `NVIDIA <name>`, or in the
/// pre-2021 form `A100-SXM4-…`/`A100-PCIE-…`, which no prose uses.
fn needs_brand(key: &str) -> bool {
    !(key.starts_with("GeForce ")
        || key.starts_with("Quadro ")
        || key.starts_with("Tesla ")
        || key.starts_with("TITAN ")
        || key.starts_with("RTX "))
}

/// `c` may end a name: anything but a letter or digit.
fn ends_name(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_none_or(|c| !c.is_ascii_alphanumeric())
}

/// Words the driver prints after a model's name for its variants (`RTX 5070 Ti`, `RTX 5090 D`,
/// `RTX 4090 Laptop GPU`, `H100 80GB HBM3`, `RTX 6000 Ada Generation`, `B300 SXM6 AC`).
const VARIANT_WORDS: &[&str] = &[
    "Ti",
    "SUPER",
    "Super",
    "D",
    "Laptop",
    "GPU",
    "Max-Q",
    "Ada",
    "Generation",
    "Blackwell",
    "Workstation",
    "Server",
    "Edition",
    "NVL",
    "PCIe",
    "HBM3",
    "HBM3e",
    "SXM",
    "SXM4",
    "SXM5",
    "SXM6",
    "AC",
    "SFF",
    "(Pascal)",
];

/// How far the variant part after a model's name goes: a suffix stuck to it (`-SXM4-80GB`,
/// `S-PCIE-32GB`), then single-space words of [`VARIANT_WORDS`] or memory sizes (`80GB`).
fn variant_len(after: &str) -> usize {
    let mut len = after
        // (a suffix the driver prints is ASCII: full-width punctuation after a name is prose's)
        // (a quote ends a Python string holding the name: `'NVIDIA GeForce RTX 5090'`)
        .find(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ')' | '|' | '\'' | '"') || !c.is_ascii()
        })
        .unwrap_or(after.len());
    loop {
        let rest = &after[len..];
        let Some(word) = rest.strip_prefix(' ') else {
            break;
        };
        let w = word
            .split(|c: char| c.is_whitespace() || c == ',')
            .next()
            .unwrap_or("");
        let size = w.len() > 2
            && w.ends_with("GB")
            && w[..w.len() - 2].bytes().all(|b| b.is_ascii_digit());
        if w.is_empty() || !(VARIANT_WORDS.contains(&w) || size) {
            break;
        }
        len += 1 + w.len();
    }
    len
}

/// A GPU named in a line: the name as far as the table knows it, and its sm.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Named {
    pub name: String,
    pub sm: u32,
}

/// The longest key that `s` starts with, ending where a name may end.
fn longest_key(s: &str) -> Option<(&'static str, u32)> {
    TABLE
        .iter()
        .filter(|(k, _)| s.starts_with(k) && ends_name(&s[k.len()..]))
        .max_by_key(|(k, _)| k.len())
        .copied()
}

/// A stub `nvidia-smi` cut (`GeForce RTX 40` before `...`): the sm every key it could be
/// shares, if they all share one.
fn stub_sm(stub: &str) -> Option<u32> {
    let stub = stub.trim_end();
    if stub.len() < 3 {
        return None;
    }
    let mut sms = TABLE
        .iter()
        .filter(|(k, _)| k.starts_with(stub))
        .map(|(_, sm)| *sm);
    let first = sms.next()?;
    sms.all(|s| s == first).then_some(first)
}

/// The compute capability (sm) of a GPU named exactly as the driver prints it, with or without
/// the `NVIDIA ` before it; `None` for a name the table does not know.
pub fn sm_of(name: &str) -> Option<u32> {
    let n = name.trim();
    let (branded, rest) = match n.strip_prefix("NVIDIA ") {
        Some(r) => (true, r),
        None => (false, n),
    };
    let (k, sm) = longest_key(rest)?;
    takes(branded, k, &rest[k.len()..]).then_some(sm)
}

/// Whether a key found after (or without) the driver's `NVIDIA ` is a name: a data-centre model
/// needs the brand before it, or the pre-2021 form `A100-SXM4-40GB` (a `-` straight after it).
fn takes(branded: bool, key: &str, after: &str) -> bool {
    branded || !needs_brand(key) || after.starts_with('-')
}

/// `RTX`/`GTX`, a model number of 3-4 digits (a space before it or not) and an optional `Ti` or
/// `SUPER` suffix, ending at a word boundary: the GeForce card of that number, whose capability
/// the table gives (`GeForce RTX 2060`, sm_75). The length of text read and the card, named as
/// written; `None` for anything else (`RTX 6000` is no GeForce; `RTX A6000` has no number).
fn written_geforce(at: &str) -> Option<(usize, Named)> {
    let family = ["RTX", "GTX"].into_iter().find(|f| at.starts_with(f))?;
    let rest = &at[3..];
    let gap = usize::from(rest.starts_with(' '));
    let digits = rest[gap..].bytes().take_while(u8::is_ascii_digit).count();
    if !(3..=4).contains(&digits) {
        return None;
    }
    let mut len = 3 + gap + digits;
    let number = &at[3 + gap..len];
    for suffix in ["Ti", "TI", "ti", "SUPER", "Super"] {
        for sep in ["", " "] {
            let word = format!("{sep}{suffix}");
            if at[len..].starts_with(&word)
                && !at[len + word.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
            {
                len += word.len();
                break;
            }
        }
    }
    if at[len..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return None;
    }
    let sm = sm_of(&format!("GeForce {family} {number}"))?;
    Some((
        len,
        Named {
            name: at[..len].to_string(),
            sm,
        },
    ))
}

/// The GPUs a line names, as the driver prints names: each place where `NVIDIA ` (or a brand the
/// older drivers print first: `GeForce`, `Quadro`, `Tesla`, `TITAN`) starts a name the table
/// knows, or a table cut (`…...`) whose every reading has one capability.
pub fn names_in(line: &str) -> Vec<Named> {
    let mut out: Vec<Named> = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < line.len() {
        // every name starts with an ASCII capital after a non-alphanumeric byte
        let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if !boundary || !bytes[i].is_ascii_uppercase() {
            i += 1;
            continue;
        }
        let at = &line[i..];
        let (branded, rest) = match at.strip_prefix("NVIDIA ") {
            Some(r) => (true, r),
            None => (false, at),
        };
        let key = longest_key(rest).filter(|(k, _)| takes(branded, k, &rest[k.len()..]));
        if let Some((k, sm)) = key {
            let len = k.len() + variant_len(&rest[k.len()..]);
            let shown = &rest[..len];
            let name = if branded {
                format!("NVIDIA {shown}")
            } else {
                shown.to_string()
            };
            if !out.iter().any(|n| n.name == name) {
                out.push(Named { name, sm });
            }
            i += at.len() - rest.len() + len;
            continue;
        }
        // a GeForce card as its owner writes it, without the brand the driver prints before it
        // (`RTX 5060 TI`, `RTX2060`, `GTX 1080Ti` in an issue form's GPU field)
        if !branded && let Some((len, named)) = written_geforce(at) {
            if !out.iter().any(|n| n.name == named.name) {
                out.push(named);
            }
            i += len;
            continue;
        }
        // a name the table column cut: `NVIDIA GeForce RTX 40...`
        if branded
            && let Some(cut) = rest.find("...")
            && cut <= 32
            && let Some(sm) = stub_sm(&rest[..cut])
        {
            let name = format!("NVIDIA {}...", rest[..cut].trim_end());
            if !out.iter().any(|n| n.name == name) {
                out.push(Named { name, sm });
            }
            i += at.len() - rest.len() + cut + 3;
            continue;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geforce_cards_as_owners_write_them() {
        // InvokeAI issue form (invoke-ai/InvokeAI#7934): `RTX 5060 TI`; ComfyUI's Other section
        // (Comfy-Org/ComfyUI#10326): `- RTX2060`
        let one = |l: &str| {
            names_in(l)
                .into_iter()
                .map(|n| (n.name, n.sm))
                .collect::<Vec<_>>()
        };
        assert_eq!(one("RTX 5060 TI "), [("RTX 5060 TI".to_string(), 120)]);
        assert_eq!(one("- RTX2060"), [("RTX2060".to_string(), 75)]);
        assert_eq!(one("a GTX 1080Ti, "), [("GTX 1080Ti".to_string(), 61)]);
        assert_eq!(one("RTX 4090 SUPER?"), [("RTX 4090 SUPER".to_string(), 89)]);
        // the driver's own spelling still reads as before, once
        assert_eq!(
            one("NVIDIA GeForce RTX 3090"),
            [("NVIDIA GeForce RTX 3090".to_string(), 86)]
        );
        // a Python REPL's repr of `torch.cuda.get_device_name(0)`: the quote is not the name's
        assert_eq!(
            one("'NVIDIA GeForce RTX 5090'"),
            [("NVIDIA GeForce RTX 5090".to_string(), 120)]
        );
        // not GeForce numbers: professional cards, longer numbers, words around
        for l in ["RTX 6000", "RTX 30901", "XRTX 3090", "RTX 3090x", "RTX 12"] {
            assert!(one(l).is_empty(), "{l}: {:?}", one(l));
        }
    }

    #[test]
    fn names_as_drivers_print_them() {
        // the driver's own spellings, from public pastes: collect_env (pytorch/pytorch#150733,
        // vllm-project/vllm#10147), nvidia-smi tables (TorchStudio/torchstudio#71), ComfyUI
        // (Comfy-Org/ComfyUI#7126), sglang check_env (sgl-project/sglang#18943)
        assert_eq!(sm_of("NVIDIA GeForce RTX 5090 D"), Some(120));
        assert_eq!(sm_of("NVIDIA GeForce RTX 5070 Ti"), Some(120));
        assert_eq!(sm_of("NVIDIA B200"), Some(100));
        assert_eq!(sm_of("NVIDIA B300 SXM6 AC"), Some(103));
        assert_eq!(sm_of("NVIDIA H100 80GB HBM3"), Some(90));
        assert_eq!(sm_of("NVIDIA A100-SXM4-80GB"), Some(80));
        assert_eq!(sm_of("A100-SXM4-40GB"), Some(80));
        assert_eq!(sm_of("NVIDIA A10G"), Some(86));
        assert_eq!(sm_of("Tesla V100S-PCIE-32GB"), Some(70));
        assert_eq!(sm_of("Tesla V100-SXM2-32GB"), Some(70));
        assert_eq!(sm_of("GeForce RTX 3080"), Some(86));
        assert_eq!(sm_of("NVIDIA RTX 6000 Ada Generation"), Some(89));
        assert_eq!(sm_of("Quadro RTX 6000"), Some(75));
        assert_eq!(
            sm_of("NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
            Some(120)
        );
        assert_eq!(sm_of("NVIDIA GH200 480GB"), Some(90));
        // developer.nvidia.com/cuda-gpus: GB10 (DGX Spark) 12.1 as pytorch/pytorch#172629's
        // warning names it, Jetson Thor 11.0 as vllm-project/vllm#34470's collect_env names it,
        // the RTX PRO Blackwell server and Max-Q cards 12.0 (NVIDIA/personaplex#2)
        assert_eq!(sm_of("NVIDIA GB10"), Some(121));
        assert_eq!(sm_of("NVIDIA Thor"), Some(110));
        assert_eq!(
            sm_of("NVIDIA RTX PRO 6000 Blackwell Server Edition"),
            Some(120)
        );
        assert_eq!(
            sm_of("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"),
            Some(120)
        );
        assert_eq!(sm_of("NVIDIA RTX A3000 Laptop GPU"), Some(86));
        assert_eq!(sm_of("NVIDIA T1000 8GB"), Some(75));
        // a bare word is not a GPU: `Thor`, `GB10` need the driver's brand before them
        assert_eq!(sm_of("Thor"), None);
        assert_eq!(sm_of("GB10"), None);
        assert_eq!(sm_of("NVIDIA GB100"), None);
        // unknown or not a product name: nothing
        assert_eq!(sm_of("NVIDIA Graphics Device"), None);
        assert_eq!(sm_of("GTX 3090"), None);
        assert_eq!(sm_of("NVIDIA RTX 4090"), None);
        assert_eq!(sm_of("NVIDIA A1000"), None);
    }

    #[test]
    fn names_found_in_lines() {
        let n = |l: &str| names_in(l).into_iter().map(|n| n.sm).collect::<Vec<_>>();
        // ComfyUI's `Device:` line and its report's `**Name:**` (Comfy-Org/ComfyUI#6823, #7126)
        assert_eq!(
            n(
                "2025-02-15T18:39:38.434500 - Device: cuda:0 NVIDIA GeForce RTX 5080 : cudaMallocAsync"
            ),
            [120]
        );
        assert_eq!(
            n("> - **Name:** cuda:0 NVIDIA GeForce RTX 5070 Ti : cudaMallocAsync"),
            [120]
        );
        // nvidia-smi's table row (TorchStudio/torchstudio#71) and a cut name
        assert_eq!(
            n("|   0  NVIDIA GeForce RTX 5090      WDDM  |   00000000:01:00.0  On |"),
            [120]
        );
        assert_eq!(n("|   0  NVIDIA GeForce RTX 40...  Off |"), [89]);
        // a cut that could be any GeForce (HaFred/dnn-rocket-accelerator#55): nothing
        assert!(n("|   0  NVIDIA GeForce ...  On   | 00000000:01:00.0 Off |").is_empty());
        // nvidia-smi -q (JeanLucPons/BTCCollider#12), -L (NVIDIA/DCGM#94), a query CSV row
        assert_eq!(
            n("    Product Name                          : GeForce RTX 2080 Ti"),
            [75]
        );
        let l = names_in(
            "GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-a22537c7-6eaa-7bdb-0ba4-45e67e84e963)",
        );
        assert_eq!((l[0].name.as_str(), l[0].sm), ("NVIDIA A100 80GB PCIe", 80));
        assert_eq!(n("NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB"), [90]);
        // collect_env's GPU line on a Jetson Thor and the GB10 warning's GPU
        assert_eq!(
            n("GPU models and configuration : GPU 0: NVIDIA Thor"),
            [110]
        );
        assert_eq!(
            n("    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1."),
            [121]
        );
        // sglang's check_env (sgl-project/sglang#3685)
        assert_eq!(n("GPU 0,1,2,3,4,5,6,7: NVIDIA H20"), [90]);
        // a GeForce card written by its owner is its card (`geforce_cards_as_owners_write_them`);
        // a bare number or a data-centre model without the brand is not a name
        assert_eq!(n("- GPU: NVIDIA RTX 4090"), [89]);
        assert!(n("I bought a 5090 and an H100").is_empty());
        assert!(n("GTX 3090").is_empty());
        // text around the name in other scripts (full-width punctuation, CJK)
        assert_eq!(n("显卡：NVIDIA GeForce RTX 3090，驱动"), [86]);
        // full-width punctuation ends the name (stylegan3-editing#12: `GeForce RTX 3090）`)
        assert_eq!(
            names_in("nvidia. GeForce RTX 3090） because")[0].name,
            "GeForce RTX 3090"
        );
        assert!(n("é…ü “quoted” 中文").is_empty());
        // a longer model is not read as the shorter one
        assert!(n("NVIDIA A1000 6GB").is_empty());
    }
}

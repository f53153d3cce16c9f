//! `env.set` / `env.unset`: one variable in an env file, written in the file's own format
//! (dotenv, shell `export`, /etc/environment, systemd `Environment=`), or in a launch script
//! where it sets the variable.
//!
//! A shell file (a launch script given as `--config`, the script that started a `--pid` job,
//! an env file of `export` lines) is edited on the bash grammar's tree ([`shell`]): at the one
//! place that sets the variable — a command's prefix, an `export`/`declare -x` operand, an
//! `env` argument, or the one file the script sources that sets it — and nowhere else. Where that is not one exact edit (set in two places,
//! inside a quoted command, a line that holds more), or where the job has the variable from
//! an environment gpufix cannot see (the user's shell), the fix is left to the person with a
//! note that says where the value is set and the command line to start the job without it.
//!
//! With `--pid`, `env.unset` follows the variable to where it is set (`place`): the launch
//! script, a file it sources, then — for a Slurm batch job — the batch script as submitted
//! (`$SLURM_SUBMIT_DIR/$SLURM_JOB_NAME`, taken only when its bytes are those of the copy slurmd
//! runs, `SlurmdSpoolDir/job%05u/slurm_script`; the copy itself is never edited), where an
//! `export` or an `#SBATCH --export=` entry is edited and the plan says to resubmit; and — for a
//! job in a systemd service (the `.service` of its cgroup path) — the unit file and its
//! drop-ins (`Environment=`) and the files its `EnvironmentFile=` lines name, searched in the
//! system unit path of systemd.unit(5). A unit's file is edited only under /etc (a vendor unit
//! in /usr/lib or a runtime one in /run is left to the person, with the drop-in that unsets it),
//! and the plan says `systemctl daemon-reload` and a restart are needed.

use super::FixCtx;
use super::edit::env as envedit;
use super::file::FileEdit;
use crate::fixes::FixError;
use crate::formats::shell;
use crate::formats::syntax::Refusal;

/// The file's dialect from its path and content: the same detection the `env` probe reads an
/// `--env-file` with, so the fix writes in the form the probe will read.
fn format_for(path: &str, old: &str) -> envedit::Format {
    envedit::detect_format(Some(std::path::Path::new(path)), old)
}

/// A shell file: named or written as one, or a launch script (a command line, a shebang).
fn is_shell(path: &str, old: &str) -> bool {
    match format_for(path, old) {
        envedit::Format::Shell => true,
        envedit::Format::Dotenv => {
            old.starts_with("#!")
                || crate::formats::job_text::detect(old)
                    == Some(crate::formats::job_text::JobText::Launcher)
        }
        _ => false,
    }
}

/// The refusal of a shell edit as a note, or None when the edit can be made.
fn refused<T>(path: &str, r: Result<T, Refusal>) -> Option<String> {
    match r {
        Err(Refusal::Unproven(why)) => Some(format!("{path}: {why}")),
        _ => None,
    }
}

/// The command that starts the `--pid` job without `name`: the launch script's shell line
/// (`bash run.sh`) when a shell among its parents runs one, else the job's own command line.
fn start_without(name: &str, cx: &FixCtx) -> Option<String> {
    let pid = cx.inputs.pid?;
    let argv = match crate::probes::config_sources::launching_shell(cx.host, pid) {
        Some((_, argv, _)) => argv,
        None => cx
            .host
            .read_file(&format!("/proc/{pid}/cmdline"))
            .ok()?
            .split(|c| *c == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    };
    let words: Vec<String> = argv.iter().map(|a| shell::quote(a, "")).collect();
    Some(format!("env -u {name} {}", words.join(" ")))
}

/// With `--pid` and no file that sets the variable: it came from the environment the job was
/// started in.
fn from_the_shell(name: &str, cx: &FixCtx, file: Option<&str>) -> Option<String> {
    let pid = cx.inputs.pid?;
    let cmd = start_without(name, cx)?;
    let where_ = match file {
        Some(f) => format!("the launch script {f} does not set it"),
        None => "no launch script gpufix can read started the job".into(),
    };
    Some(format!(
        "PID {pid} has {name} from the environment it was started in, which gpufix cannot see ({where_}): start the job without it: `{cmd}`"
    ))
}

/// Where `env.unset` acts: a file to edit, or a note for the person.
#[derive(Debug)]
enum Place {
    File(String),
    Note(String),
}

/// The system unit search path, highest priority first (systemd.unit(5), "Unit File Load Path").
const UNIT_DIRS: [&str; 5] = [
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
];

fn text_at(cx: &FixCtx, path: &str) -> Option<String> {
    cx.host
        .read_file(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The variables of the job's process.
fn environ(cx: &FixCtx, pid: u32) -> indexmap::IndexMap<String, String> {
    cx.host
        .read_file(&format!("/proc/{pid}/environ"))
        .map(|b| crate::formats::env::parse_environ(&b))
        .unwrap_or_default()
}

/// Does the file at `path` set `name`, read the way its edit would read it?
fn file_sets(path: &str, name: &str, cx: &FixCtx) -> bool {
    let Ok((text, true, _)) = super::file::current(path, cx) else {
        return false;
    };
    if is_shell(path, &text) {
        shell::names(&text, name)
    } else {
        crate::formats::env::read_vars(Some(std::path::Path::new(path)), &text).contains_key(name)
    }
}

/// slurmd's copy of a batch script (`…/job00042/slurm_script`): what a Slurm job's shell runs.
fn is_spool_copy(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    parts.next() == Some("slurm_script")
        && parts.next().is_some_and(|d| {
            d.strip_prefix("job")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
        })
}

/// A Slurm batch job's variable: in the batch script as submitted, when it is the script the
/// job runs.
fn slurm_place(name: &str, pid: u32, cx: &FixCtx, launch: Option<&str>) -> Option<Place> {
    let env = environ(cx, pid);
    let job = env.get("SLURM_JOB_ID").or_else(|| env.get("SLURM_JOBID"))?;
    let id: u32 = job.parse().ok()?;
    // slurmd writes the script it runs to SlurmdSpoolDir/job%05u/slurm_script (default
    // SlurmdSpoolDir: /var/spool/slurmd)
    let spool = launch
        .filter(|l| is_spool_copy(l))
        .map(str::to_string)
        .unwrap_or_else(|| format!("/var/spool/slurmd/job{id:05}/slurm_script"));
    let runs = text_at(cx, &spool);
    // sbatch names a job after its script unless --job-name says otherwise
    let submitted = match (env.get("SLURM_SUBMIT_DIR"), env.get("SLURM_JOB_NAME")) {
        (Some(d), Some(n)) if d.starts_with('/') && !n.is_empty() && !n.contains('/') => {
            Some(format!("{}/{n}", d.trim_end_matches('/')))
        }
        _ => None,
    };
    let read = submitted
        .as_deref()
        .map(|p| crate::probes::config_sources::read_job_file(cx.host, pid, p));
    let in_copy = runs.as_deref().and_then(|t| {
        let sc = shell::Script::parse(t).ok()?;
        let mut lines: Vec<usize> = sc.sites(name).iter().map(|s| s.line).collect();
        lines.extend(sc.sbatch_exports(name).iter().map(|e| e.line));
        (!lines.is_empty()).then_some(lines)
    });
    match (&read, &runs) {
        (Some(Ok((at, text))), Some(copy)) if text == copy => {
            if shell::names(text, name) {
                Some(Place::File(at.clone()))
            } else {
                Some(Place::Note(format!(
                    "PID {pid} is Slurm job {id}, whose batch script {at} does not set {name}: it came from the environment sbatch was run in (sbatch exports it by default): resubmit without it: `env -u {name} sbatch {}`",
                    shell::quote(at, "")
                )))
            }
        }
        _ => {
            let why = match (&submitted, &read, &runs) {
                (_, _, None) => format!("slurmd's copy {spool} cannot be read"),
                (None, _, _) => {
                    "SLURM_SUBMIT_DIR/SLURM_JOB_NAME name no script (--job-name?)".into()
                }
                (Some(p), Some(Err(e)), _) => {
                    format!("the submitted script {p} cannot be read: {e}")
                }
                (Some(p), _, _) => format!(
                    "{p} is not the script the job runs (it differs from slurmd's copy {spool})"
                ),
            };
            let set = match &in_copy {
                Some(lines) => format!(
                    "the script it runs sets {name} on line {}",
                    lines
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => format!("the script it runs does not set {name}"),
            };
            Some(Place::Note(format!(
                "PID {pid} is Slurm job {id}; {set}, but gpufix edits the batch script as submitted, never slurmd's copy, and {why}: remove {name} from the batch script (or the environment sbatch is run in) and resubmit the job"
            )))
        }
    }
}

/// The service a process runs in: the innermost `.service` of its cgroup path
/// (`0::/system.slice/train.service`), not a user manager (`user@1000.service`).
fn service_of(cx: &FixCtx, pid: u32) -> Option<String> {
    let t = text_at(cx, &format!("/proc/{pid}/cgroup"))?;
    t.lines()
        .filter_map(|l| l.splitn(3, ':').nth(2))
        .find_map(|path| {
            path.rsplit('/')
                .find(|c| c.ends_with(".service") && !c.starts_with("user@"))
                .map(str::to_string)
        })
        .filter(|u| {
            u.bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"@._-:\\".contains(&c))
        })
}

/// A unit's files in the order systemd reads them: the unit file (its template's, for
/// `name@inst.service`) from the first directory of the search path that has it, then its
/// drop-ins (`UNIT.d/*.conf`) from every directory, by file name.
fn unit_files(cx: &FixCtx, unit: &str) -> Vec<String> {
    let template = unit
        .split_once('@')
        .map(|(a, b)| format!("{a}@.{}", b.rsplit('.').next().unwrap_or("service")));
    let mut out: Vec<String> = Vec::new();
    let main = UNIT_DIRS.iter().find_map(|d| {
        [Some(unit.to_string()), template.clone()]
            .into_iter()
            .flatten()
            .map(|u| format!("{d}/{u}"))
            .find(|p| text_at(cx, p).is_some())
    });
    out.extend(main);
    let mut drop_ins: Vec<(String, String)> = Vec::new();
    for d in UNIT_DIRS {
        let dir = format!("{d}/{unit}.d");
        for f in cx.host.read_dir(&dir).unwrap_or_default() {
            if f.ends_with(".conf") && !drop_ins.iter().any(|(n, _)| *n == f) {
                drop_ins.push((f.clone(), format!("{dir}/{f}")));
            }
        }
    }
    drop_ins.sort();
    out.extend(drop_ins.into_iter().map(|(_, p)| p));
    out
}

/// A variable of a job in a systemd service: where the unit sets it.
fn systemd_place(name: &str, pid: u32, cx: &FixCtx) -> Option<Place> {
    let unit = service_of(cx, pid)?;
    let files = unit_files(cx, &unit);
    if files.is_empty() {
        return Some(Place::Note(format!(
            "PID {pid} runs in {unit}, whose unit file is in none of {}: find where it sets {name} and remove it there",
            UNIT_DIRS.join(", ")
        )));
    }
    let mut setters: Vec<String> = Vec::new();
    for f in &files {
        let Some(text) = text_at(cx, f) else { continue };
        let vars = crate::formats::env::vars_as(&text, envedit::Format::SystemdDropIn);
        if vars.contains_key(name) {
            setters.push(f.clone());
        }
        for e in crate::formats::env::environment_files(&text) {
            if let Some(t) = text_at(cx, &e)
                && crate::formats::env::read_vars(Some(std::path::Path::new(&e)), &t)
                    .contains_key(name)
                && !setters.contains(&e)
            {
                setters.push(e);
            }
        }
    }
    let drop_in = format!(
        "add `[Service]` / `UnsetEnvironment={name}` in /etc/systemd/system/{unit}.d/, then `systemctl daemon-reload` and `systemctl restart {unit}`"
    );
    Some(match setters.as_slice() {
        [] => Place::Note(format!(
            "PID {pid} runs in {unit}, whose unit files ({}) do not set {name}: it comes from the service manager's environment (DefaultEnvironment=, `systemctl set-environment`); to drop it for this unit, {drop_in}",
            files.join(", ")
        )),
        [one] if one.starts_with("/etc/") => Place::File(one.clone()),
        [one] => Place::Note(format!(
            "{name} is set by {unit} in {one}, which gpufix does not edit (a unit's files are edited under /etc only; a vendor or runtime file is replaced on upgrade or reboot): {drop_in}"
        )),
        more => Place::Note(format!(
            "{name} is set for {unit} in {} places ({}): gpufix edits a value only where exactly one place sets it; {drop_in}",
            more.len(),
            more.join(", ")
        )),
    })
}

/// Where `env.unset` removes the variable. Without `--pid`: the file given (or the one file it
/// sources that sets it). With `--pid`: the launch script or a file it sources when they set
/// it, else the Slurm batch script or systemd unit the job runs from, else the launch script
/// (whose edit then says the value came from the environment the job was started in), else a
/// note with the command line that starts the job without it.
fn place(name: &str, file: Option<&str>, cx: &FixCtx) -> Result<Place, FixError> {
    let file = cx.input_file(file, "env_file");
    let Some(pid) = cx.inputs.pid else {
        let f = file?;
        return Ok(Place::File(sourced_setter(&f, name, cx).unwrap_or(f)));
    };
    let launch = file.as_ref().ok().filter(|f| !is_spool_copy(f));
    if let Some(f) = launch {
        if let Some(s) = sourced_setter(f, name, cx) {
            return Ok(Place::File(s));
        }
        if file_sets(f, name, cx) {
            return Ok(Place::File(f.clone()));
        }
    }
    if let Some(p) = slurm_place(name, pid, cx, file.as_deref().ok()) {
        return Ok(p);
    }
    if let Some(p) = systemd_place(name, pid, cx) {
        return Ok(p);
    }
    if let Some(f) = launch {
        return Ok(Place::File(f.clone()));
    }
    from_the_shell(name, cx, None)
        .map(Place::Note)
        .ok_or_else(|| file.err().unwrap_or_else(|| FixError::failed("")))
}

/// The unit a file under a unit directory belongs to (`train.service` of
/// `/etc/systemd/system/train.service.d/env.conf`).
fn unit_of_path(path: &str) -> Option<&str> {
    let rest = UNIT_DIRS
        .iter()
        .find_map(|d| path.strip_prefix(d)?.strip_prefix('/'))?;
    let first = rest.split('/').next()?;
    Some(first.strip_suffix(".d").unwrap_or(first))
}

pub struct EnvSet;

impl FileEdit for EnvSet {
    type Params = SetParams;
    fn name(&self) -> &'static str {
        "env.set"
    }
    fn path(&self, params: &SetParams, cx: &FixCtx) -> Result<String, FixError> {
        cx.input_file(params.file.as_deref(), "env_file")
    }
    fn edit(
        &self,
        path: &str,
        old: &str,
        _exists: bool,
        params: &SetParams,
    ) -> Result<String, FixError> {
        if is_shell(path, old) {
            return shell::set(old, &params.name, &params.value.text()).map_err(FixError::from);
        }
        envedit::env_set(
            old,
            Some(format_for(path, old)),
            &params.name,
            &params.value.text(),
        )
        .map_err(FixError::from)
    }
    fn unproven(&self, path: &str, old: &str, params: &SetParams, _cx: &FixCtx) -> Option<String> {
        if !is_shell(path, old) {
            return None;
        }
        refused(path, shell::set(old, &params.name, &params.value.text()))
    }
    fn summary(&self, params: &SetParams, path: &str) -> String {
        format!("set {}={} in {path}", params.name, params.value.text())
    }
}

/// When a launch script does not set `name` itself but exactly one file it sources (`source
/// ./env.sh`, a path written out) does, that file: the place the value is set.
fn sourced_setter(script: &str, name: &str, cx: &FixCtx) -> Option<String> {
    let (text, _, _) = super::file::current(script, cx).ok()?;
    if !is_shell(script, &text) || !shell::sets(&text, name).ok()?.is_empty() {
        return None;
    }
    let dir = script.rsplit_once('/').map_or(".", |(d, _)| d);
    let setters: Vec<String> = shell::sourced(&text)
        .into_iter()
        .map(|(_, p)| {
            if p.starts_with('/') {
                p
            } else {
                format!("{dir}/{}", p.trim_start_matches("./"))
            }
        })
        .filter(|p| {
            super::file::current(p, cx)
                .ok()
                .and_then(|(t, exists, _)| exists.then(|| shell::sets(&t, name).ok()))
                .flatten()
                .is_some_and(|s| !s.is_empty())
        })
        .collect();
    match setters.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

pub struct EnvUnset;

impl FileEdit for EnvUnset {
    type Params = UnsetParams;
    fn name(&self) -> &'static str {
        "env.unset"
    }
    fn path(&self, params: &UnsetParams, cx: &FixCtx) -> Result<String, FixError> {
        match place(&params.name, params.file.as_deref(), cx)? {
            Place::File(f) => Ok(f),
            Place::Note(note) => Err(FixError::LeftToYou { note }),
        }
    }
    fn edit(
        &self,
        path: &str,
        old: &str,
        _exists: bool,
        params: &UnsetParams,
    ) -> Result<String, FixError> {
        if is_shell(path, old) {
            return shell::unset(old, &params.name).map_err(FixError::from);
        }
        envedit::env_unset(old, Some(format_for(path, old)), &params.name).map_err(FixError::from)
    }
    fn left_to_you(&self, params: &UnsetParams, cx: &FixCtx) -> Option<String> {
        match place(&params.name, params.file.as_deref(), cx) {
            Ok(Place::Note(n)) => Some(n),
            _ => None,
        }
    }
    fn unproven(&self, path: &str, old: &str, params: &UnsetParams, cx: &FixCtx) -> Option<String> {
        if !is_shell(path, old) {
            return None;
        }
        let name = params.name.as_str();
        match shell::unset(old, name) {
            // the launch script of a --pid job does not set it: the job's environment did
            Ok(new) if new == old => from_the_shell(name, cx, Some(path)),
            r => refused(path, r),
        }
    }
    fn summary(&self, params: &UnsetParams, path: &str) -> String {
        format!("unset {} in {path}", params.name)
    }
    fn summary_of(&self, params: &UnsetParams, path: &str, old: &str) -> String {
        let s = self.summary(params, path);
        if let Some(unit) = unit_of_path(path) {
            format!("{s} (then `systemctl daemon-reload` and `systemctl restart {unit}`)")
        } else if old.lines().any(|l| l.starts_with("#SBATCH")) {
            format!(
                "{s} (a Slurm batch script: the running job keeps its environment; resubmit it with sbatch)"
            )
        } else {
            s
        }
    }
}

/// Parameters of `env.set`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetParams {
    /// The variable.
    pub name: String,
    /// Its value.
    pub value: super::spec::Scalar,
    /// The env file (default: --env-file).
    #[serde(default)]
    pub file: Option<String>,
}

/// Parameters of `env.unset`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnsetParams {
    /// The variable.
    pub name: String,
    /// The env file (default: --env-file).
    #[serde(default)]
    pub file: Option<String>,
}

pub static SET: super::spec::FixSpec = super::spec::FixSpec {
    name: "env.set",
    doc: "Set a variable in an env file, in the file's own format.",
    params: crate::kinds::ParamsDecl::of::<SetParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &EnvSet,
};

pub static UNSET: super::spec::FixSpec = super::spec::FixSpec {
    name: "env.unset",
    doc: "Remove a variable from an env file.",
    params: crate::kinds::ParamsDecl::of::<UnsetParams>(),
    max_safety: crate::report::Safety::Safe,
    imp: &EnvUnset,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixes::file::FileEdit;
    use serde_json::json;

    fn set(path: &str, old: &str, name: &str, value: &str) -> Result<String, FixError> {
        let action = json!({"name": name, "value": value});
        EnvSet.edit(
            path,
            old,
            true,
            &crate::kinds::parse(action.as_object().unwrap()).unwrap(),
        )
    }

    fn unset(path: &str, old: &str, name: &str) -> Result<String, FixError> {
        let action = json!({ "name": name });
        EnvUnset.edit(
            path,
            old,
            true,
            &crate::kinds::parse(action.as_object().unwrap()).unwrap(),
        )
    }

    /// Issue 22: the edit takes exactly the named assignment out of a launch script.
    #[test]
    fn unset_in_a_script_takes_only_the_named_assignment() {
        let run = "#!/bin/bash\nexport NCCL_DEBUG=INFO\nNCCL_P2P_DISABLE=1 torchrun --nproc_per_node=8 train.py --config cfg.yaml\nexport CUDA_LAUNCH_BLOCKING=1 OMP_NUM_THREADS=8\n";
        assert_eq!(
            unset("/job/run.sh", run, "NCCL_P2P_DISABLE").unwrap(),
            run.replace("NCCL_P2P_DISABLE=1 torchrun", "torchrun")
        );
        assert_eq!(
            unset("/job/run.sh", run, "CUDA_LAUNCH_BLOCKING").unwrap(),
            run.replace("CUDA_LAUNCH_BLOCKING=1 OMP", "OMP")
        );
        assert_eq!(
            unset("/job/run.sh", "export A=1 B=1\n", "A").unwrap(),
            "export B=1\n"
        );
        assert_eq!(
            unset("/job/run.sh", "env A=1 python train.py\n", "A").unwrap(),
            "env python train.py\n"
        );
        // a heredoc and a continuation line keep every byte
        let src = "#!/bin/bash\ncat > hostfile <<EOF\nnode1 slots=8\nEOF\nA=1 \\\n  deepspeed --hostfile hostfile \\\n  train.py\n";
        assert_eq!(
            unset("/job/run.sh", src, "A").unwrap(),
            src.replace("A=1 \\\n  ", "")
        );
        // set in two places: no edit
        let err = unset("/job/run.sh", "export A=1\nA=1 python t.py\n", "A").unwrap_err();
        // no exact edit exists: the refusal that leaves it to the person, not a bad fix
        assert!(
            matches!(&err, FixError::Script(Refusal::Unproven(m)) if m.contains("set in 2 places")),
            "{err:?}"
        );
    }

    #[test]
    fn the_path_decides_the_dialect_as_it_does_for_the_probe() {
        // A script named .sh is a shell file even before it has an `export` line.
        let new = set("/opt/job/run.sh", "A=1\n", "NCCL_DEBUG", "INFO").unwrap();
        assert_eq!(new, "A=1\nexport NCCL_DEBUG=INFO\n");
        let vars = crate::formats::env::read_vars(Some(std::path::Path::new("run.sh")), &new);
        assert_eq!(vars["NCCL_DEBUG"], "INFO");
        // A dotted name is no shell assignment: refused rather than written for bash to reject.
        let err = set("/opt/job/run.sh", "A=1\n", "A.B", "1").unwrap_err();
        assert!(
            matches!(&err, FixError::Script(Refusal::Invalid(m)) if m.contains("not valid in a shell file")),
            "{err:?}"
        );
        // The same name in a dotenv file is fine.
        assert_eq!(
            set("/opt/job/job.env", "A=1\n", "A.B", "1").unwrap(),
            "A=1\nA.B=1\n"
        );
        // /etc/environment is quoted the pam_env way.
        assert_eq!(
            set("/etc/environment", "", "HF_HOME", "/data/hf").unwrap(),
            "HF_HOME=\"/data/hf\"\n"
        );
    }
}

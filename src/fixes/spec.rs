//! THE list of fix kinds as playbooks see them: name, parameters, the loosest safety class a
//! playbook may give it, and what must restart. Validation reads this list; each kind's
//! implementation lives in its own file.

use crate::probes::ParamSpec;
use crate::report::Safety;

pub struct FixKindSpec {
    pub name: &'static str,
    pub doc: &'static str,
    pub params: &'static [ParamSpec],
    /// The loosest class a playbook may declare for a fix using this kind.
    pub max_safety: Safety,
}

const fn p(name: &'static str, required: bool, ty: &'static str, doc: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        required,
        ty,
        doc,
    }
}

pub static FIX_KINDS: &[FixKindSpec] = &[
    FixKindSpec {
        name: "file.line",
        doc: "ensure a line is present, absent, or replaces the first line matching a regex",
        params: &[
            p("path", true, "string", "file to edit"),
            p("line", true, "string", "the line"),
            p("state", false, "string", "present (default) or absent"),
            p(
                "regex",
                false,
                "string",
                "replace the first matching line instead of appending",
            ),
        ],
        max_safety: Safety::Safe,
    },
    FixKindSpec {
        name: "file.replace",
        doc: "replace every match of a regex in a file (captures as $name)",
        params: &[
            p("path", true, "string", "file to edit"),
            p("regex", true, "string", "pattern"),
            p(
                "replacement",
                true,
                "string",
                "replacement, `$name` for captures",
            ),
        ],
        max_safety: Safety::Safe,
    },
    FixKindSpec {
        name: "fstab.options",
        doc: "add or remove mount options of one fstab entry; optional remount",
        params: &[
            p("mount_point", true, "string", "the entry's mount point"),
            p("add", false, "array", "options to add"),
            p("remove", false, "array", "options to remove"),
            p("remount", false, "boolean", "also remount now (disruptive)"),
            p("fstab", false, "string", "fstab path (default /etc/fstab)"),
        ],
        max_safety: Safety::Safe,
    },
    FixKindSpec {
        name: "kmod.load",
        doc: "load a kernel module and persist it in modules-load.d",
        params: &[
            p("module", true, "string", "module name"),
            p(
                "persist",
                false,
                "string",
                "modules-load.d file (default /etc/modules-load.d/gpufix.conf)",
            ),
        ],
        max_safety: Safety::Disruptive,
    },
    FixKindSpec {
        name: "kmod.options",
        doc: "set a module option in modprobe.d",
        params: &[
            p("module", true, "string", "module name"),
            p("option", true, "string", "parameter name"),
            p("value", true, "string|integer", "parameter value"),
            p(
                "file",
                false,
                "string",
                "modprobe.d file (default /etc/modprobe.d/gpufix.conf)",
            ),
        ],
        max_safety: Safety::Safe,
    },
    FixKindSpec {
        name: "env.set",
        doc: "set a variable in an env file, in the file's own format",
        params: &[
            p("name", true, "string", "variable"),
            p("value", true, "string|integer|number|boolean", "value"),
            p("file", false, "string", "env file (default: --env-file)"),
        ],
        max_safety: Safety::Safe,
    },
    FixKindSpec {
        name: "env.unset",
        doc: "remove a variable from an env file",
        params: &[
            p("name", true, "string", "variable"),
            p("file", false, "string", "env file (default: --env-file)"),
        ],
        max_safety: Safety::Safe,
    },
    FixKindSpec {
        name: "config.set",
        doc: "set a key path in a YAML, JSON or TOML training config, keeping everything else",
        params: &[
            p(
                "key",
                true,
                "string",
                "dotted key path, e.g. data.num_workers",
            ),
            p(
                "value",
                true,
                "string|integer|number|boolean|array|object",
                "new value",
            ),
            p("file", false, "string", "config file (default: --config)"),
            p(
                "format",
                false,
                "string",
                "yaml, json or toml (default: from the file name)",
            ),
        ],
        max_safety: Safety::Safe,
    },
    FixKindSpec {
        name: "sysctl.set",
        doc: "set a sysctl at runtime and persist it in sysctl.d",
        params: &[
            p("key", true, "string", "sysctl name, e.g. vm.swappiness"),
            p("value", true, "string|integer", "value"),
            p(
                "file",
                false,
                "string",
                "sysctl.d file (default /etc/sysctl.d/90-gpufix.conf)",
            ),
        ],
        max_safety: Safety::Disruptive,
    },
    FixKindSpec {
        name: "sysfs.write",
        doc: "write a value under /sys at runtime (undo restores the value read before)",
        params: &[
            p("path", true, "string", "path under /sys"),
            p("value", true, "string|integer", "value"),
        ],
        max_safety: Safety::Disruptive,
    },
    FixKindSpec {
        name: "nvidia.persistence",
        doc: "set persistence mode through NVML",
        params: &[
            p("gpu", true, "integer|string", "GPU index, or `all`"),
            p("enabled", true, "boolean", "on or off"),
        ],
        max_safety: Safety::Disruptive,
    },
    FixKindSpec {
        name: "nvidia.power_limit",
        doc: "set the power limit through NVML (watts, or `default`)",
        params: &[
            p("gpu", true, "integer|string", "GPU index, or `all`"),
            p(
                "watts",
                true,
                "number|integer|string",
                "watts, or `default`",
            ),
        ],
        max_safety: Safety::Disruptive,
    },
    FixKindSpec {
        name: "nvidia.clocks",
        doc: "reset or set application clocks through NVML",
        params: &[
            p("gpu", true, "integer|string", "GPU index, or `all`"),
            p("action", true, "string", "reset or set"),
            p("graphics_mhz", false, "integer", "with set"),
            p("memory_mhz", false, "integer", "with set"),
        ],
        max_safety: Safety::Disruptive,
    },
    FixKindSpec {
        name: "command",
        doc: "run an argv (never a shell) with an undo argv",
        params: &[
            p("argv", true, "array", "command and arguments"),
            p("undo_argv", false, "array", "command that undoes it"),
            p(
                "safety",
                true,
                "string",
                "declared class of this command: safe, disruptive or manual",
            ),
        ],
        max_safety: Safety::Disruptive,
    },
];

pub fn find(name: &str) -> Option<&'static FixKindSpec> {
    FIX_KINDS.iter().find(|k| k.name == name)
}

//! What the playbook format derives from the kind lists (`probes::PROBES`, `fixes::FIXES`): the
//! kind-discriminated parts of the playbook schema and the authoring reference. The parameter
//! machinery itself is [`crate::kinds`], below the probes and fixes that declare with it.

use crate::kinds::{ParamsDecl, union_schema};
use schemars::{Schema, SchemaGenerator};

/// The authoring reference: every probe kind and fix kind with parameters and outputs.
/// `docs/playbooks.md` is this text; a test keeps it current.
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# Playbook authoring reference\n\n\
Generated from the kinds' parameter types by `gpufix list --probes --fixes --format markdown`; \
a test fails when this file is stale (regenerate it with \
`cargo run -- list --probes --fixes --format markdown > docs/playbooks.md`).\n\n\
A key or parameter marked * is required. Any parameter may be a template (`\"{{ params.x }}\"`); \
its rendered value is checked against the type shown. Any fix action may carry `when:`, an \
expression: the action is proposed only where it holds (a rule that judges two producers' texts, \
each with its own fix); a finding left with instructions only is a manual fix.\n\n## Probe kinds\n",
    );
    for p in crate::probes::PROBES {
        out.push_str(&format!(
            "\n### `{}`{}\n\n{}\n",
            p.name(),
            if p.sampled() { " (sampled)" } else { "" },
            p.doc()
        ));
        params_table(&mut out, &p.params());
        out.push_str("\nOutputs:\n\n");
        for (f, d) in p.fields() {
            out.push_str(&format!("- `{f}`: {d}\n"));
        }
    }
    out.push_str("\n## Fix kinds\n");
    for f in crate::fixes::FIXES {
        out.push_str(&format!(
            "\n### `{}`\n\n{} Safety at most `{}`.\n",
            f.name,
            f.doc,
            f.max_safety.as_str()
        ));
        params_table(&mut out, &f.params);
    }
    out
}

fn params_table(out: &mut String, params: &ParamsDecl) {
    let rows = params.rows();
    if rows.is_empty() {
        out.push_str("\nParameters: none.\n");
        return;
    }
    out.push_str("\n| parameter | type | default | description |\n|---|---|---|---|\n");
    for r in rows {
        out.push_str(&format!(
            "| `{}`{} | {} | {} | {} |\n",
            r.name,
            if r.required { "*" } else { "" },
            r.ty.replace('|', "\\|"),
            r.default.map(|d| format!("`{d}`")).unwrap_or_default(),
            r.doc.replace('|', "\\|")
        ));
    }
}

/// The playbook schema of `probes:` (`{alias: {kind: …, …}}`), discriminated over the probe kinds.
pub fn probe_map_schema(g: &mut SchemaGenerator) -> Schema {
    let kinds: Vec<(&str, &str, ParamsDecl)> = crate::probes::PROBES
        .iter()
        .map(|p| (p.name(), p.doc(), p.params()))
        .collect();
    g.definitions_mut()
        .insert("ProbeSpec".into(), union_schema("probe", &kinds));
    schemars::json_schema!({
        "type": "object",
        "additionalProperties": { "$ref": "#/$defs/ProbeSpec" }
    })
}

/// The playbook schema of a fix's `actions:`, discriminated over the fix kinds.
pub fn fix_actions_schema(g: &mut SchemaGenerator) -> Schema {
    let kinds: Vec<(&str, &str, ParamsDecl)> = crate::fixes::FIXES
        .iter()
        .map(|f| (f.name, f.doc, f.params))
        .collect();
    let mut union = union_schema("fix", &kinds);
    // every action may carry `when`, an expression: proposed only where it holds
    if let Some(one_of) = union.get_mut("oneOf").and_then(|v| v.as_array_mut()) {
        for k in one_of {
            if let Some(props) = k.get_mut("properties").and_then(|v| v.as_object_mut()) {
                props.insert(
                    "when".into(),
                    serde_json::json!({
                        "type": "string",
                        "description": "an expression: the action is proposed only where it holds"
                    }),
                );
            }
        }
    }
    g.definitions_mut().insert("FixAction".into(), union);
    schemars::json_schema!({
        "type": "array",
        "items": { "$ref": "#/$defs/FixAction" }
    })
}

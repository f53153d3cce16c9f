//! The order rules run in: each after its dependencies, bottom-up by layer.

use super::*;

/// Deterministic topological order: bottom-up by layer, then tier, then position, with each
/// rule after its dependencies. Returns the cycle (`a, b, a`) if there is one.
pub fn order(rules: &[LoadedRule]) -> Result<Vec<String>, Vec<String>> {
    let idx: HashMap<&str, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.rule.id.as_str(), i))
        .collect();
    let deps: Vec<Vec<usize>> = rules
        .iter()
        .map(|r| {
            // a rule is judged after the rules it depends on and the ones that explain it
            r.rule
                .depends_on
                .iter()
                .chain(&r.rule.explained_by)
                .filter_map(|d| idx.get(d.as_str()).copied())
                .collect()
        })
        .collect();
    // cycle detection with an explicit stack (names the cycle, as `just` does)
    let mut state = vec![0u8; rules.len()]; // 0 new, 1 on stack, 2 done
    for start in 0..rules.len() {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if *next < deps[node].len() {
                let d = deps[node][*next];
                *next += 1;
                match state[d] {
                    0 => {
                        state[d] = 1;
                        stack.push((d, 0));
                    }
                    1 => {
                        let pos = stack.iter().position(|(n, _)| *n == d).unwrap();
                        let mut cycle: Vec<String> = stack[pos..]
                            .iter()
                            .map(|(n, _)| rules[*n].rule.id.clone())
                            .collect();
                        cycle.push(rules[d].rule.id.clone());
                        return Err(cycle);
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    // Kahn with an ordered ready set. A rule never sorts before its dependencies, even when a
    // dependency sits in a higher layer (the key only breaks ties among ready rules).
    let key = |i: usize| (rules[i].layer, i);
    let mut indeg: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); rules.len()];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            users[d].push(i);
        }
    }
    let mut ready: BTreeMap<(crate::playbook::Layer, usize), usize> = (0..rules.len())
        .filter(|&i| indeg[i] == 0)
        .map(|i| (key(i), i))
        .collect();
    let mut out = Vec::with_capacity(rules.len());
    while let Some((_, i)) = ready.pop_first() {
        out.push(rules[i].rule.id.clone());
        for &u in &users[i] {
            indeg[u] -= 1;
            if indeg[u] == 0 {
                ready.insert(key(u), u);
            }
        }
    }
    Ok(out)
}

//! `%import` of grammar files: every module found, parsed, renamed and merged into one
//! [`File`] without imports, with Lark's meaning.
//!
//! A module is a `.lark` file named by a dotted path (`%import .sub.mod.NAME` reads
//! `sub/mod.lark`). It is looked for, in Lark's order, in:
//! 1. each folder of [`super::LoadConfig::import_paths`];
//! 2. for a relative import (`%import .mod …`), the folder of the importing file
//!    ([`super::LoadConfig::base_dir`] for the main grammar, the current folder when unset);
//! 3. the built-in modules: `common` and `unicode`, written for munch (see [`super::common`]),
//!    and Lark's own bundled grammars `python` and `lark`, read from
//!    [`super::LoadConfig::lark_grammars`] (the `grammars` folder of an installed `lark`
//!    package). munch does not ship those two: they are Lark's work, and their rule names are
//!    their interface, so a rewrite would be a copy. Without the folder, importing them is a
//!    located [`ErrorKind::BundledGrammarUnavailable`].
//!
//! Importing, as Lark's `GrammarBuilder.do_import` does it: imports of one module path are
//! grouped (their names merged); the module is loaded with every name it defines renamed —
//! an imported name to its alias, any other `name` to `mod__name` (`_name` to `_mod__name`),
//! through every level of nested imports — its own `%ignore`s are dropped, and only the
//! definitions the imported names need are kept. The module's definitions come before the
//! importing file's, so `%override` and `%extend` there apply to them.
//!
//! One difference: Lark inlines terminals into terminals before it drops unused definitions;
//! munch inlines later, so a terminal that only other terminals of the module use is kept, as
//! *hidden* ([`Flat::hidden`]): it can be inlined, but no rule sees it and no anonymous
//! literal is named after it, as in Lark.
//!
//! Every module's text is appended to one source string ([`Sources`]), so positions stay
//! plain byte offsets and errors inside a module name that module's file and line.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::ast::*;
use super::error::ErrorKind;
use super::{common, parse, RawError};

/// Budget: modules loaded for one grammar (each import of a module loads it once more, under
/// its own names, so a diamond of imports could otherwise grow exponentially).
pub(crate) const MAX_MODULES: usize = 1_000;
/// Budget: nesting of imports (a module importing itself would never end).
pub(crate) const MAX_IMPORT_DEPTH: usize = 32;

/// One file's place in [`Sources::text`].
#[derive(Debug)]
pub(crate) struct SourceFile {
    /// The name errors give it (a path, or `<munch>/common.lark` for a built-in module).
    pub(crate) name: String,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The text of the grammar and every module it imports, one after the other.
#[derive(Debug)]
pub(crate) struct Sources {
    pub(crate) text: String,
    /// The main grammar first; ordered by `start`.
    pub(crate) files: Vec<SourceFile>,
    /// The most bytes of text, every file together ([`super::LoadConfig::max_grammar_bytes`]).
    max_bytes: usize,
}

impl Sources {
    pub(crate) fn new(main: &str, name: &str, max_bytes: usize) -> Self {
        Self {
            max_bytes,
            text: main.to_string(),
            files: vec![SourceFile {
                name: name.to_string(),
                start: 0,
                end: main.len(),
            }],
        }
    }

    /// The file holding byte `offset`.
    pub(crate) fn file_at(&self, offset: usize) -> &SourceFile {
        let i = self
            .files
            .partition_point(|f| f.start <= offset)
            .saturating_sub(1);
        &self.files[i]
    }

    fn push(&mut self, name: String, text: &str) -> Result<usize, ErrorKind> {
        if self.text.len() + text.len() + 1 > self.max_bytes {
            return Err(ErrorKind::LimitExceeded {
                what: "bytes of grammar text, imported modules included (`max_grammar_bytes`)",
                limit: self.max_bytes,
            });
        }
        // A newline keeps a file without one at its end from running into the next.
        self.text.push('\n');
        let start = self.text.len();
        self.text.push_str(text);
        self.files.push(SourceFile {
            name,
            start,
            end: self.text.len(),
        });
        Ok(start)
    }
}

/// The grammar with its imports merged.
#[derive(Debug, Default)]
pub(crate) struct Flat {
    pub(crate) file: File,
    /// Imported terminals that only other terminals use (see the module docs).
    pub(crate) hidden: HashSet<String>,
}

/// Where modules are found.
pub(crate) struct Finder<'c> {
    pub(crate) import_paths: &'c [PathBuf],
    pub(crate) lark_grammars: Option<&'c Path>,
    pub(crate) max_nesting: usize,
}

/// One level of renaming: `prefix` for names, `aliases` for the imported ones.
struct Mangle {
    prefix: String,
    aliases: HashMap<String, String>,
}

/// Renames `name` through `chain`, innermost module first.
fn mangle(chain: &[Mangle], name: &str) -> String {
    let mut s = name.to_string();
    for m in chain.iter().rev() {
        s = match m.aliases.get(&s) {
            Some(a) => a.clone(),
            None => match s.strip_prefix('_') {
                Some(rest) => format!("_{}__{rest}", m.prefix),
                None => format!("{}__{s}", m.prefix),
            },
        };
    }
    s
}

fn err(kind: ErrorKind, pos: Pos) -> RawError {
    RawError {
        kind,
        pos,
        aux: None,
    }
}

fn is_terminal_name(name: &str) -> bool {
    name.trim_start_matches('_')
        .starts_with(|c: char| c.is_ascii_uppercase())
}

/// Merges the imports of `file` (the main grammar, at the start of `sources`).
pub(crate) fn flatten(
    file: File,
    sources: &mut Sources,
    finder: &Finder<'_>,
    base_dir: Option<&Path>,
) -> Result<Flat, RawError> {
    if !file.items.iter().any(|i| matches!(i, Item::Import(_))) {
        return Ok(Flat {
            file,
            hidden: HashSet::new(),
        });
    }
    let mut state = State {
        sources,
        finder,
        modules: 0,
        hidden: HashSet::new(),
    };
    let base = base_dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let items = state.module_items(file, &[], &base, false, 0)?;
    Ok(Flat {
        file: File { items },
        hidden: state.hidden,
    })
}

struct State<'s, 'c> {
    sources: &'s mut Sources,
    finder: &'s Finder<'c>,
    modules: usize,
    hidden: HashSet<String>,
}

/// The imports of one file grouped by module, in order of first appearance.
struct Group {
    relative: bool,
    module: Vec<Name>,
    /// (name, alias) as written.
    names: Vec<(Name, Name)>,
    pos: Pos,
}

impl State<'_, '_> {
    /// The items of `file` with its imports merged and every name renamed through `chain`.
    /// `builtin` files are munch's own modules (relative imports inside them find nothing).
    fn module_items(
        &mut self,
        file: File,
        chain: &[Mangle],
        dir: &Path,
        builtin: bool,
        depth: usize,
    ) -> Result<Vec<Item>, RawError> {
        let mut groups: Vec<Group> = Vec::new();
        let mut rest = Vec::new();
        for item in file.items {
            match item {
                Item::Import(imp) => {
                    let key: Vec<&str> = imp.module.iter().map(|n| n.text.as_str()).collect();
                    let found = groups.iter_mut().find(|g| {
                        g.module
                            .iter()
                            .map(|n| n.text.as_str())
                            .eq(key.iter().copied())
                    });
                    let names = imp.names.into_iter().map(|(n, a)| {
                        let a = a.unwrap_or_else(|| n.clone());
                        (n, a)
                    });
                    match found {
                        // Lark requires one module path to be either relative or not.
                        Some(g) if g.relative == imp.relative => g.names.extend(names),
                        Some(_) => {
                            return Err(err(
                                ErrorKind::UnknownImport {
                                    module: key.join("."),
                                    name: None,
                                },
                                imp.pos,
                            ))
                        }
                        None => groups.push(Group {
                            relative: imp.relative,
                            module: imp.module,
                            names: names.collect(),
                            pos: imp.pos,
                        }),
                    }
                }
                other => rest.push(other),
            }
        }
        let mut items = Vec::new();
        for g in groups {
            items.extend(self.import(g, chain, dir, builtin, depth)?);
        }
        for mut item in rest {
            if matches!(item, Item::Ignore(_)) && !chain.is_empty() {
                // An imported module's `%ignore`s are its own, as in Lark.
                continue;
            }
            if !chain.is_empty() {
                rename_item(&mut item, chain);
            }
            items.push(item);
        }
        Ok(items)
    }

    fn import(
        &mut self,
        g: Group,
        chain: &[Mangle],
        dir: &Path,
        builtin: bool,
        depth: usize,
    ) -> Result<Vec<Item>, RawError> {
        let dotted: Vec<&str> = g.module.iter().map(|n| n.text.as_str()).collect();
        let module_name = format!("{}{}", if g.relative { "." } else { "" }, dotted.join("."));
        let module_pos = g.module.first().map_or(g.pos, |first| {
            first.pos.to(g.module.last().map_or(first.pos, |l| l.pos))
        });
        if depth >= MAX_IMPORT_DEPTH {
            return Err(err(
                ErrorKind::LimitExceeded {
                    what: "nested imports",
                    limit: MAX_IMPORT_DEPTH,
                },
                module_pos,
            ));
        }
        self.modules += 1;
        if self.modules > MAX_MODULES {
            return Err(err(
                ErrorKind::LimitExceeded {
                    what: "imported modules",
                    limit: MAX_MODULES,
                },
                module_pos,
            ));
        }
        for (n, a) in &g.names {
            if is_terminal_name(&n.text) != is_terminal_name(&a.text) {
                return Err(err(
                    ErrorKind::UnexpectedToken {
                        found: format!("`{}`", a.text),
                        expected: if is_terminal_name(&n.text) {
                            "an uppercase name (the imported name is a terminal)"
                        } else {
                            "a lowercase name (the imported name is a rule)"
                        },
                    },
                    a.pos,
                ));
            }
        }
        let (text, name, module_dir, is_builtin) =
            self.find(&dotted, g.relative, dir, builtin, &module_name, module_pos)?;
        let start = self
            .sources
            .push(name, &text)
            .map_err(|kind| err(kind, module_pos))?;
        let file = parse::parse_at(&self.sources.text, start, self.finder.max_nesting)?;

        let mut aliases = HashMap::new();
        for (n, a) in &g.names {
            aliases.insert(n.text.clone(), a.text.clone());
        }
        let mut inner: Vec<Mangle> = Vec::with_capacity(chain.len() + 1);
        for m in chain {
            inner.push(Mangle {
                prefix: m.prefix.clone(),
                aliases: m.aliases.clone(),
            });
        }
        inner.push(Mangle {
            prefix: dotted.join("__"),
            aliases,
        });
        let items = self.module_items(file, &inner, &module_dir, is_builtin, depth + 1)?;

        // Keep what the imported names need (Lark's `_remove_unused`).
        let roots: Vec<(String, &Name)> = g
            .names
            .iter()
            .map(|(n, _)| (mangle(&inner, &n.text), n))
            .collect();
        let mut defined: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, item) in items.iter().enumerate() {
            for n in defined_names(item) {
                defined.entry(n).or_default().push(i);
            }
        }
        for (root, n) in &roots {
            if !defined.contains_key(root.as_str()) {
                return Err(err(
                    ErrorKind::UnknownImport {
                        module: module_name,
                        name: Some(n.text.clone()),
                    },
                    n.pos,
                ));
            }
        }
        // Rules' references make a name used (Lark); terminals' references only hidden.
        let mut used: HashSet<String> = HashSet::new();
        let mut through_terms: HashSet<String> = HashSet::new();
        let mut queue: Vec<(String, bool)> = roots.into_iter().map(|(r, _)| (r, true)).collect();
        while let Some((name, by_rule)) = queue.pop() {
            let seen = if by_rule {
                !used.insert(name.clone())
            } else {
                used.contains(&name) || !through_terms.insert(name.clone())
            };
            if seen {
                continue;
            }
            let is_term = is_terminal_name_of(&items, defined.get(name.as_str()));
            for &i in defined.get(name.as_str()).into_iter().flatten() {
                let mut refs = Vec::new();
                referenced_names(&items[i], &mut refs);
                for r in refs {
                    queue.push((r, by_rule && !is_term));
                }
            }
        }
        for name in &through_terms {
            if !used.contains(name) {
                self.hidden.insert(name.clone());
            }
        }
        let keep: Vec<bool> = items
            .iter()
            .map(|item| {
                defined_names(item)
                    .iter()
                    .any(|n| used.contains(*n) || through_terms.contains(*n))
            })
            .collect();
        // An imported name is defined where it is imported (as Lark reports a duplicate).
        let alias_pos: HashMap<String, Pos> = g
            .names
            .iter()
            .map(|(n, a)| (mangle(&inner, &n.text), a.pos))
            .collect();
        Ok(items
            .into_iter()
            .zip(keep)
            .filter_map(|(item, k)| k.then_some(item))
            .map(|mut item| {
                if let Item::Rule(RuleDef { name, .. }) | Item::Term(TermDef { name, .. }) =
                    &mut item
                {
                    if let Some(&p) = alias_pos.get(&name.text) {
                        name.pos = p;
                    }
                }
                item
            })
            .map(|item| match item {
                // Keep only the declared names that are needed.
                Item::Declare(names) => Item::Declare(
                    names
                        .into_iter()
                        .filter(|(n, _)| used.contains(&n.text) || through_terms.contains(&n.text))
                        .collect(),
                ),
                other => other,
            })
            .collect())
    }

    /// The module's text, its name for errors, its folder and whether it is built in.
    fn find(
        &self,
        dotted: &[&str],
        relative: bool,
        dir: &Path,
        from_builtin: bool,
        module_name: &str,
        pos: Pos,
    ) -> Result<(String, String, PathBuf, bool), RawError> {
        let mut rel = PathBuf::new();
        for part in dotted {
            rel.push(part);
        }
        rel.set_extension("lark");
        let mut dirs: Vec<&Path> = self
            .finder
            .import_paths
            .iter()
            .map(PathBuf::as_path)
            .collect();
        if relative && !from_builtin {
            dirs.push(dir);
        }
        for d in dirs {
            let path = d.join(&rel);
            if let Ok(bytes) = std::fs::read(&path) {
                return read_text(bytes, &path, pos);
            }
        }
        if !relative {
            if let [one] = dotted {
                if let Some(text) = builtin_module(one) {
                    return Ok((
                        text.to_string(),
                        format!("<munch>/{one}.lark"),
                        PathBuf::new(),
                        true,
                    ));
                }
                if LARK_BUNDLED.contains(one) {
                    let Some(dir) = self.finder.lark_grammars else {
                        return Err(err(
                            ErrorKind::BundledGrammarUnavailable {
                                module: one.to_string(),
                            },
                            pos,
                        ));
                    };
                    let path = dir.join(&rel);
                    return match std::fs::read(&path) {
                        Ok(bytes) => read_text(bytes, &path, pos),
                        Err(e) => Err(err(
                            ErrorKind::ImportUnreadable {
                                path: path.display().to_string(),
                                message: e.to_string(),
                            },
                            pos,
                        )),
                    };
                }
            }
        }
        Err(err(
            ErrorKind::UnknownImport {
                module: module_name.to_string(),
                name: None,
            },
            pos,
        ))
    }
}

/// Lark's bundled grammars that munch reads from an installed `lark` package.
pub(crate) const LARK_BUNDLED: &[&str] = &["python", "lark"];

fn builtin_module(name: &str) -> Option<&'static str> {
    match name {
        common::MODULE => Some(common::SOURCE),
        common::UNICODE_MODULE => Some(common::UNICODE_SOURCE),
        _ => None,
    }
}

fn read_text(
    bytes: Vec<u8>,
    path: &Path,
    pos: Pos,
) -> Result<(String, String, PathBuf, bool), RawError> {
    let name = path.display().to_string();
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, name, dir, false)),
        Err(e) => Err(err(
            ErrorKind::ImportUnreadable {
                path: name,
                message: format!("invalid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
            },
            pos,
        )),
    }
}

fn is_terminal_name_of(items: &[Item], defs: Option<&Vec<usize>>) -> bool {
    defs.and_then(|d| d.first()).is_some_and(|&i| {
        matches!(
            &items[i],
            Item::Term(_) | Item::Override(Def::Term(_)) | Item::Extend(Def::Term(_))
        ) || matches!(&items[i], Item::Declare(names) if names.iter().any(|(_, t)| *t))
    })
}

/// The names an item defines (or modifies).
fn defined_names(item: &Item) -> Vec<&str> {
    match item {
        Item::Rule(r) | Item::Override(Def::Rule(r)) | Item::Extend(Def::Rule(r)) => {
            vec![r.name.text.as_str()]
        }
        Item::Term(t) | Item::Override(Def::Term(t)) | Item::Extend(Def::Term(t)) => {
            vec![t.name.text.as_str()]
        }
        Item::Declare(names) => names.iter().map(|(n, _)| n.text.as_str()).collect(),
        Item::Ignore(_) | Item::Import(_) => Vec::new(),
    }
}

/// The names an item's body refers to (not its template parameters).
fn referenced_names(item: &Item, out: &mut Vec<String>) {
    let (body, params): (&Expansions, &[Name]) = match item {
        Item::Rule(r) | Item::Override(Def::Rule(r)) | Item::Extend(Def::Rule(r)) => {
            (&r.body, &r.params)
        }
        Item::Term(t) | Item::Override(Def::Term(t)) | Item::Extend(Def::Term(t)) => (&t.body, &[]),
        _ => return,
    };
    let mut names = Vec::new();
    names_in(body, &mut names);
    out.extend(
        names
            .into_iter()
            .filter(|n| !params.iter().any(|p| &p.text == n)),
    );
}

fn names_in(exps: &Expansions, out: &mut Vec<String>) {
    for alt in &exps.alts {
        for e in &alt.items {
            match &e.atom {
                Atom::Group(inner) | Atom::Maybe(inner) => names_in(inner, out),
                Atom::Value(v) => value_names(v, out),
            }
        }
    }
}

fn value_names(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Terminal(n) | Value::Rule(n) => out.push(n.text.clone()),
        Value::Template { name, args, .. } => {
            out.push(name.text.clone());
            for a in args {
                value_names(a, out);
            }
        }
        Value::Literal(_) | Value::Range { .. } => {}
    }
}

fn rename(n: &mut Name, chain: &[Mangle]) {
    n.text = mangle(chain, &n.text);
}

fn rename_item(item: &mut Item, chain: &[Mangle]) {
    match item {
        Item::Rule(r) | Item::Override(Def::Rule(r)) | Item::Extend(Def::Rule(r)) => {
            rename(&mut r.name, chain);
            for p in &mut r.params {
                rename(p, chain);
            }
            rename_expansions(&mut r.body, chain);
        }
        Item::Term(t) | Item::Override(Def::Term(t)) | Item::Extend(Def::Term(t)) => {
            rename(&mut t.name, chain);
            rename_expansions(&mut t.body, chain);
        }
        Item::Declare(names) => {
            for (n, _) in names {
                rename(n, chain);
            }
        }
        Item::Ignore(exps) => rename_expansions(exps, chain),
        Item::Import(_) => {}
    }
}

fn rename_expansions(exps: &mut Expansions, chain: &[Mangle]) {
    for alt in &mut exps.alts {
        for e in &mut alt.items {
            match &mut e.atom {
                Atom::Group(inner) | Atom::Maybe(inner) => rename_expansions(inner, chain),
                Atom::Value(v) => rename_value(v, chain),
            }
        }
    }
}

fn rename_value(v: &mut Value, chain: &[Mangle]) {
    match v {
        Value::Terminal(n) | Value::Rule(n) => rename(n, chain),
        Value::Template { name, args, .. } => {
            rename(name, chain);
            for a in args {
                rename_value(a, chain);
            }
        }
        Value::Literal(_) | Value::Range { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_mangled_as_lark_does() {
        let chain = [
            Mangle {
                prefix: "outer".to_string(),
                aliases: HashMap::from([("inner__x".to_string(), "y".to_string())]),
            },
            Mangle {
                prefix: "inner".to_string(),
                aliases: HashMap::from([("A".to_string(), "B".to_string())]),
            },
        ];
        assert_eq!(mangle(&chain, "A"), "outer__B");
        assert_eq!(mangle(&chain, "x"), "y");
        assert_eq!(mangle(&chain, "_NL"), "_outer__inner__NL");
        assert_eq!(mangle(&chain[..1], "_rule"), "_outer__rule");
    }
}

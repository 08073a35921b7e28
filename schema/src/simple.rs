//! Normalisation: a schema (with `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`) becomes a
//! disjunction of [`Simple`] schemas, each a conjunction of atomic keywords whose subschemas
//! (`properties`, `items`, ...) are kept as [`Conj`]unctions to be compiled on their own.
//!
//! After this pass: no references, no combinators at the top of a schema; one set of bounds per
//! kind of value. [`Simple::admits`] validates a JSON value against the normal form, which is
//! how `enum`/`const` values are filtered by the keywords beside them.

use serde_json::Value;

use crate::error::{join, SchemaError, SchemaErrorKind};
use crate::number::{Bound, Dec};

/// A subschema and its JSON pointer.
#[derive(Clone, Debug)]
pub(crate) struct Sub {
    pub value: Value,
    pub ptr: String,
}

/// A conjunction of subschemas (`allOf`); empty means `true`.
pub(crate) type Conj = Vec<Sub>;

pub(crate) fn is_false(conj: &Conj) -> bool {
    conj.iter().any(|s| s.value == Value::Bool(false))
}

/// The value of `key` in the schema object `obj`. A schema object has a few keywords, and
/// comparing them is cheaper than hashing `key` (serde_json's map hashes with SipHash); a
/// large object is looked up by hash.
fn keyword<'v>(obj: &'v serde_json::Map<String, Value>, key: &str) -> Option<&'v Value> {
    if obj.len() > 8 {
        return obj.get(key);
    }
    obj.iter().find_map(|(k, v)| (k == key).then_some(v))
}

/// Whether every value satisfies the conjunction on its face (`true`, `{}`, annotations only).
pub(crate) fn is_true(conj: &Conj) -> bool {
    conj.iter()
        .all(|s| s.value == Value::Bool(true) || is_empty_obj(&s.value))
}

pub(crate) fn is_empty_obj(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.keys().all(|k| IGNORED.contains(&k.as_str())))
}

/// Keywords that never constrain an instance.
const IGNORED: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "$schema",
    "$id",
    "$anchor",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
];

/// Kinds of JSON value.
pub(crate) mod ty {
    pub const NULL: u8 = 1;
    pub const BOOL: u8 = 2;
    /// Numbers with an integer value.
    pub const INT: u8 = 4;
    /// Numbers with a non-integer value.
    pub const FRAC: u8 = 8;
    pub const STR: u8 = 16;
    pub const ARR: u8 = 32;
    pub const OBJ: u8 = 64;
    pub const ALL: u8 = 127;
    /// Each kind alone.
    pub const KINDS: [u8; 7] = [NULL, BOOL, INT, FRAC, STR, ARR, OBJ];
}

/// One conjunction of atomic keywords.
#[derive(Clone, Debug)]
pub(crate) struct Simple {
    pub types: u8,
    pub enum_: Option<Vec<Value>>,
    pub enum_ptr: String,
    // Numbers.
    pub lo: Option<Bound>,
    pub hi: Option<Bound>,
    pub multiple_of: Vec<(Dec, String)>,
    // Strings.
    pub min_len: u64,
    pub max_len: Option<u64>,
    pub len_ptr: String,
    pub patterns: Vec<(String, String)>,
    pub formats: Vec<(String, String)>,
    /// Strings rejected whatever else holds (from the complement of an `enum`/`const`).
    pub excluded: Vec<String>,
    /// Patterns (ECMA-262; a `format`'s own pattern) that no string may match, each with its
    /// keyword's pointer (from the complement of a `pattern` or `format`).
    pub not_patterns: Vec<(String, String)>,
    // Arrays.
    pub prefix: Vec<Conj>,
    pub items: Conj,
    pub min_items: u64,
    pub max_items: Option<u64>,
    pub contains: Vec<Contains>,
    pub unique: Option<String>,
    // Objects.
    pub props: Vec<(String, Conj)>,
    pub required: Vec<String>,
    pub additional: Conj,
    pub pattern_props: Vec<(String, Conj, String)>,
    pub names: Conj,
    pub min_props: u64,
    pub max_props: Option<u64>,
    pub obj_ptr: String,
}

/// A `contains` with its bounds.
#[derive(Clone, Debug)]
pub(crate) struct Contains {
    pub schema: Conj,
    pub min: u64,
    pub max: Option<u64>,
    pub ptr: String,
}

impl Simple {
    pub fn any() -> Simple {
        Simple {
            types: ty::ALL,
            enum_: None,
            enum_ptr: String::new(),
            lo: None,
            hi: None,
            multiple_of: Vec::new(),
            min_len: 0,
            max_len: None,
            len_ptr: String::new(),
            patterns: Vec::new(),
            formats: Vec::new(),
            excluded: Vec::new(),
            not_patterns: Vec::new(),
            prefix: Vec::new(),
            items: Vec::new(),
            min_items: 0,
            max_items: None,
            contains: Vec::new(),
            unique: None,
            props: Vec::new(),
            required: Vec::new(),
            additional: Vec::new(),
            pattern_props: Vec::new(),
            names: Vec::new(),
            min_props: 0,
            max_props: None,
            obj_ptr: String::new(),
        }
    }

    /// Whether only the types are constrained (so the complement is a type set).
    fn types_only(&self) -> bool {
        let any = Simple::any();
        self.enum_.is_none()
            && self.lo.is_none()
            && self.hi.is_none()
            && self.multiple_of.is_empty()
            && self.min_len == 0
            && self.max_len.is_none()
            && self.patterns.is_empty()
            && self.formats.is_empty()
            && self.excluded.is_empty()
            && self.not_patterns.is_empty()
            && self.prefix.is_empty()
            && self.items.is_empty()
            && self.min_items == 0
            && self.max_items.is_none()
            && self.contains.is_empty()
            && self.unique.is_none()
            && self.props.is_empty()
            && self.required.is_empty()
            && is_true(&self.additional)
            && self.pattern_props.is_empty()
            && self.names.is_empty()
            && self.min_props == any.min_props
            && self.max_props.is_none()
    }

    /// Whether every value of kind `t` satisfies this schema (no keyword for `t` is set).
    pub fn takes_all(&self, t: u8) -> bool {
        if self.types & t != t || self.enum_.is_some() {
            return false;
        }
        match t {
            ty::INT | ty::FRAC => {
                self.lo.is_none() && self.hi.is_none() && self.multiple_of.is_empty()
            }
            ty::STR => {
                self.min_len == 0
                    && self.max_len.is_none()
                    && self.patterns.is_empty()
                    && self.formats.is_empty()
                    && self.excluded.is_empty()
                    && self.not_patterns.is_empty()
            }
            ty::ARR => {
                self.prefix.is_empty()
                    && self.items.is_empty()
                    && self.min_items == 0
                    && self.max_items.is_none()
                    && self.contains.is_empty()
                    && self.unique.is_none()
            }
            ty::OBJ => {
                self.props.is_empty()
                    && self.required.is_empty()
                    && is_true(&self.additional)
                    && self.pattern_props.is_empty()
                    && self.names.is_empty()
                    && self.min_props == 0
                    && self.max_props.is_none()
            }
            _ => true,
        }
    }

    /// What an object's member `key` must satisfy: its `properties` entry, else the
    /// `patternProperties` it matches, else `additionalProperties`. `None` when a pattern
    /// decides and patterns cannot be checked here.
    pub fn schema_for(&self, key: &str) -> Result<Conj, SchemaError> {
        if let Some((_, c)) = self.props.iter().find(|(k, _)| k == key) {
            let mut c = c.clone();
            for (p, pc, ptr) in &self.pattern_props {
                if pattern_matches(p, key, ptr)? {
                    c.extend(pc.iter().cloned());
                }
            }
            return Ok(c);
        }
        let mut c = Vec::new();
        let mut matched = false;
        for (p, pc, ptr) in &self.pattern_props {
            if pattern_matches(p, key, ptr)? {
                matched = true;
                c.extend(pc.iter().cloned());
            }
        }
        if !matched {
            c.extend(self.additional.iter().cloned());
        }
        Ok(c)
    }
}

/// Whether ECMA pattern `p` matches somewhere in `s`.
pub(crate) fn pattern_matches(p: &str, s: &str, ptr: &str) -> Result<bool, SchemaError> {
    let hir = crate::ecma::parse(p).map_err(|reason| {
        SchemaError::new(
            SchemaErrorKind::Pattern {
                pattern: p.to_string(),
                reason,
            },
            ptr,
        )
    })?;
    let re = regex_automata::meta::Regex::builder()
        .build_from_hir(&hir)
        .map_err(|e| {
            SchemaError::new(
                SchemaErrorKind::Pattern {
                    pattern: p.to_string(),
                    reason: e.to_string(),
                },
                ptr,
            )
        })?;
    Ok(re.is_match(s))
}

/// The normaliser: the document (for `$ref`) and the options that bound it.
pub(crate) struct Normalizer<'a> {
    pub root: &'a Value,
    pub max_depth: usize,
    pub max_alternatives: usize,
    /// Draft-04/06/07: a `$ref` makes its siblings ignored.
    pub ref_overrides: bool,
    pub lenient: bool,
    pub relaxations: Vec<crate::Relaxation>,
}

/// What an `unevaluatedProperties` sees evaluated in place ([`Normalizer::evaluated`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Evaluated {
    /// The keys listed.
    Keys,
    /// Every key (an `additionalProperties` in place).
    All,
    /// Keys that depend on the instance.
    Unknown,
}

impl Evaluated {
    /// Both places' keys together.
    fn and(self, other: Evaluated) -> Evaluated {
        match (self, other) {
            (Evaluated::Unknown, _) | (_, Evaluated::Unknown) => Evaluated::Unknown,
            (Evaluated::All, _) | (_, Evaluated::All) => Evaluated::All,
            _ => Evaluated::Keys,
        }
    }
}

/// How many pairs of alternatives a cross may try per alternative it may keep.
const CROSS_PAIRS_PER_ALTERNATIVE: usize = 16;

/// Keywords munch knows it does not compile (they constrain instances).
const UNSUPPORTED: &[&str] = &["unevaluatedItems", "$dynamicRef", "$recursiveRef"];

impl Normalizer<'_> {
    /// An unsupported keyword: an error, or (lenient) a recorded relaxation.
    pub fn relax(&mut self, ptr: &str, keyword: &str, reason: &str) -> Result<(), SchemaError> {
        if self.lenient {
            self.relaxations.push(crate::Relaxation {
                pointer: join(ptr, keyword),
                keyword: keyword.to_string(),
                reason: reason.to_string(),
            });
            Ok(())
        } else {
            Err(SchemaError::unsupported(ptr, keyword, reason))
        }
    }

    /// The disjunction equivalent to the conjunction `conj`.
    pub fn normalize(&mut self, conj: &[Sub], depth: usize) -> Result<Vec<Simple>, SchemaError> {
        let mut acc = vec![Simple::any()];
        for sub in conj {
            let d = self.one(&sub.value, &sub.ptr, depth)?;
            acc = self.cross(acc, d, &sub.ptr)?;
            if acc.is_empty() {
                break;
            }
        }
        Ok(acc)
    }

    fn cross(
        &mut self,
        a: Vec<Simple>,
        b: Vec<Simple>,
        ptr: &str,
    ) -> Result<Vec<Simple>, SchemaError> {
        // The budget bounds the alternatives kept; pairs that cannot meet (an object schema
        // and a string one) cost a merge each, so the pairs tried are bounded too, more loosely.
        let over = || SchemaError::budget("max_alternatives", self.max_alternatives, ptr);
        if a.len() * b.len()
            > self
                .max_alternatives
                .saturating_mul(CROSS_PAIRS_PER_ALTERNATIVE)
        {
            return Err(over());
        }
        let mut out = Vec::new();
        for x in &a {
            for y in &b {
                if let Some(m) = merge(x, y, ptr)? {
                    if out.len() == self.max_alternatives {
                        return Err(over());
                    }
                    out.push(m);
                }
            }
        }
        Ok(out)
    }

    fn resolve(&self, r: &str, ptr: &str) -> Result<Sub, SchemaError> {
        let bad = || SchemaError::new(SchemaErrorKind::BadRef(r.to_string()), join(ptr, "$ref"));
        let frag = r.strip_prefix('#').ok_or_else(bad)?;
        let mut v = self.root;
        let mut path = String::new();
        if !frag.is_empty() {
            let frag = frag.strip_prefix('/').ok_or_else(bad)?;
            for raw in frag.split('/') {
                let tok = percent_decode(raw).ok_or_else(bad)?;
                let tok = tok.replace("~1", "/").replace("~0", "~");
                v = match v {
                    Value::Object(m) => m.get(&tok),
                    Value::Array(a) => tok.parse::<usize>().ok().and_then(|i| a.get(i)),
                    _ => None,
                }
                .ok_or_else(bad)?;
                path = join(&path, &tok);
            }
        }
        Ok(Sub {
            value: v.clone(),
            ptr: path,
        })
    }

    /// The disjunction equivalent to one schema.
    fn one(&mut self, v: &Value, ptr: &str, depth: usize) -> Result<Vec<Simple>, SchemaError> {
        if depth > self.max_depth {
            return Err(SchemaError::budget("max_depth", self.max_depth, ptr));
        }
        let obj = match v {
            Value::Bool(true) => return Ok(vec![Simple::any()]),
            Value::Bool(false) => return Ok(Vec::new()),
            Value::Object(o) => o,
            _ => {
                return Err(SchemaError::new(
                    SchemaErrorKind::Invalid {
                        keyword: "schema".into(),
                        reason: "a schema is an object or a boolean".into(),
                    },
                    ptr,
                ))
            }
        };
        if let Some(extra) = self.unevaluated_properties(obj, ptr)? {
            // The schema without the keyword, and the keyword as `additionalProperties` beside
            // the keys the schema evaluates.
            let mut rest = obj.clone();
            rest.remove("unevaluatedProperties");
            let d = self.one(&Value::Object(rest), ptr, depth)?;
            return self.cross(d, extra, ptr);
        }
        if let Some(r) = keyword(obj, "$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| SchemaError::invalid(ptr, "$ref", "not a string"))?;
            let target = self.resolve(r, ptr)?;
            let d = self.one(&target.value, &target.ptr, depth + 1)?;
            if self.ref_overrides {
                return Ok(d);
            }
            let rest = self.one_without_ref(obj, ptr, depth)?;
            return self.cross(d, rest, ptr);
        }
        self.one_without_ref(obj, ptr, depth)
    }

    /// `unevaluatedProperties` where the keys its schema evaluates are known without reading an
    /// instance: those of `properties` here and in what `allOf` and `$ref` bring in place. Then
    /// it is `additionalProperties` beside exactly those keys (`Some`, to cross with the schema
    /// without it), or redundant where an `additionalProperties` there evaluates every key
    /// (`Some` of anything). `None` where the keyword is absent or trivial, or after a
    /// relaxation (lenient) where `anyOf`, `oneOf`, `if`, dependencies or `patternProperties`
    /// in place decide which keys are evaluated.
    fn unevaluated_properties(
        &mut self,
        obj: &serde_json::Map<String, Value>,
        ptr: &str,
    ) -> Result<Option<Vec<Simple>>, SchemaError> {
        let Some(x) = keyword(obj, "unevaluatedProperties") else {
            return Ok(None);
        };
        if matches!(x, Value::Bool(true)) || x.as_object().is_some_and(|m| m.is_empty()) {
            return Ok(None);
        }
        let mut keys = Vec::new();
        let mut seen = Vec::new();
        match self.evaluated(obj, ptr, true, &mut keys, &mut seen)? {
            Evaluated::Keys => Ok(Some(vec![Simple {
                types: ty::ALL,
                props: keys.into_iter().map(|k| (k, Vec::new())).collect(),
                additional: vec![Sub {
                    value: x.clone(),
                    ptr: join(ptr, "unevaluatedProperties"),
                }],
                obj_ptr: ptr.to_string(),
                ..Simple::any()
            }])),
            Evaluated::All => Ok(Some(vec![Simple::any()])),
            Evaluated::Unknown => {
                self.relax(
                    ptr,
                    "unevaluatedProperties",
                    "the keys its schema evaluates are not listed in place (anyOf, oneOf, if, \
                     dependencies or patternProperties decide them)",
                )?;
                Ok(None)
            }
        }
    }

    /// Adds the keys `obj` evaluates in place to `keys` (see
    /// [`Normalizer::unevaluated_properties`]); `top`: `obj` is the schema with the keyword.
    fn evaluated(
        &self,
        obj: &serde_json::Map<String, Value>,
        ptr: &str,
        top: bool,
        keys: &mut Vec<String>,
        seen: &mut Vec<String>,
    ) -> Result<Evaluated, SchemaError> {
        const BY_INSTANCE: &[&str] = &[
            "anyOf",
            "oneOf",
            "if",
            "dependentSchemas",
            "dependencies",
            "patternProperties",
            "$dynamicRef",
            "$recursiveRef",
        ];
        if BY_INSTANCE.iter().any(|k| obj.contains_key(*k))
            || (!top && obj.contains_key("unevaluatedProperties"))
        {
            return Ok(Evaluated::Unknown);
        }
        if obj.contains_key("additionalProperties") {
            return Ok(Evaluated::All);
        }
        if let Some(props) = keyword(obj, "properties").and_then(Value::as_object) {
            for k in props.keys() {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        let mut found = Evaluated::Keys;
        let mut visit = |this: &Self, v: &Value, p: &str, seen: &mut Vec<String>| {
            let Value::Object(o) = v else {
                return Ok(Evaluated::Keys);
            };
            if seen.iter().any(|s| s == p) {
                // A cycle in place: an infinite schema, whose keys are not listed here.
                return Ok(Evaluated::Unknown);
            }
            seen.push(p.to_string());
            let r = this.evaluated(o, p, false, keys, seen);
            seen.pop();
            r
        };
        if let Some(r) = keyword(obj, "$ref").and_then(Value::as_str) {
            let target = self.resolve(r, ptr)?;
            found = found.and(visit(self, &target.value, &target.ptr, seen)?);
        }
        if let Some(all) = keyword(obj, "allOf").and_then(Value::as_array) {
            for (i, v) in all.iter().enumerate() {
                let p = join(&join(ptr, "allOf"), &i.to_string());
                found = found.and(visit(self, v, &p, seen)?);
            }
        }
        Ok(found)
    }

    fn one_without_ref(
        &mut self,
        obj: &serde_json::Map<String, Value>,
        ptr: &str,
        depth: usize,
    ) -> Result<Vec<Simple>, SchemaError> {
        for k in UNSUPPORTED {
            if let Some(v) = keyword(obj, k) {
                let trivial = match v {
                    Value::Bool(true) => true,
                    Value::Object(m) => m.is_empty(),
                    _ => false,
                };
                if !trivial {
                    self.relax(ptr, k, "not supported")?;
                }
            }
        }
        let base = self.atomic(obj, ptr)?;
        let mut acc = vec![base];
        // A dependency is met by an object without the key, by one with the dependency (the
        // keys it requires, or its schema), and by any other value.
        for key in ["dependentRequired", "dependentSchemas", "dependencies"] {
            let Some(deps) = keyword(obj, key) else {
                continue;
            };
            let deps = deps
                .as_object()
                .ok_or_else(|| SchemaError::invalid(ptr, key, "not an object"))?;
            for (name, dep) in deps {
                let p = join(&join(ptr, key), name);
                let met = match dep {
                    Value::Array(keys) if key != "dependentSchemas" => {
                        let required = keys
                            .iter()
                            .map(|k| k.as_str().map(str::to_string))
                            .collect::<Option<Vec<String>>>()
                            .ok_or_else(|| {
                                SchemaError::invalid(&p, key, "not an array of strings")
                            })?;
                        vec![Simple {
                            types: ty::OBJ,
                            required,
                            obj_ptr: p.clone(),
                            ..Simple::any()
                        }]
                    }
                    _ if key != "dependentRequired" => self.one(dep, &p, depth + 1)?,
                    _ => return Err(SchemaError::invalid(&p, key, "not an array")),
                };
                let without = Simple {
                    types: ty::OBJ,
                    props: vec![(
                        name.clone(),
                        vec![Sub {
                            value: Value::Bool(false),
                            ptr: p.clone(),
                        }],
                    )],
                    obj_ptr: p.clone(),
                    ..Simple::any()
                };
                let other = Simple {
                    types: ty::ALL & !ty::OBJ,
                    ..Simple::any()
                };
                let union: Vec<Simple> = [other, without].into_iter().chain(met).collect();
                acc = self.cross_or_relax(acc, union, ptr, key)?;
            }
        }
        if let Some(all) = keyword(obj, "allOf") {
            let list = all
                .as_array()
                .ok_or_else(|| SchemaError::invalid(ptr, "allOf", "not an array"))?;
            for (i, s) in list.iter().enumerate() {
                let p = join(&join(ptr, "allOf"), &i.to_string());
                let d = self.one(s, &p, depth + 1)?;
                acc = self.cross(acc, d, &p)?;
            }
        }
        for key in ["anyOf", "oneOf"] {
            let Some(any) = keyword(obj, key) else {
                continue;
            };
            let list = any
                .as_array()
                .ok_or_else(|| SchemaError::invalid(ptr, key, "not an array"))?;
            let mut branches: Vec<Vec<Simple>> = Vec::new();
            for (i, s) in list.iter().enumerate() {
                let p = join(&join(ptr, key), &i.to_string());
                branches.push(self.one(s, &p, depth + 1)?);
            }
            if key == "oneOf" {
                // Per kind of value: branches must not overlap, except where two branches
                // both take every value of that kind (then no value of it is in `oneOf`).
                let mut excluded = 0u8;
                let mut overlap = false;
                for t in ty::KINDS {
                    for i in 0..branches.len() {
                        for j in i + 1..branches.len() {
                            for a in &branches[i] {
                                for b in &branches[j] {
                                    if a.types & b.types & t == 0 {
                                        continue;
                                    }
                                    let at = Simple {
                                        types: t,
                                        ..a.clone()
                                    };
                                    let bt = Simple {
                                        types: t,
                                        ..b.clone()
                                    };
                                    if self.disjoint(&at, &bt, depth)? {
                                        continue;
                                    }
                                    if a.takes_all(t) && b.takes_all(t) {
                                        excluded |= t;
                                    } else {
                                        overlap = true;
                                    }
                                }
                            }
                        }
                    }
                }
                if overlap {
                    // Exactly one: each branch with the complements of the others.
                    let p = join(ptr, key);
                    let mut exact: Option<Vec<Vec<Simple>>> = Some(Vec::new());
                    for i in 0..branches.len() {
                        let mut only = branches[i].clone();
                        for (j, other) in branches.iter().enumerate() {
                            if j == i {
                                continue;
                            }
                            match self.complement(other, Some(&only), &p)? {
                                Some(c) => only = self.cross(only, c, &p)?,
                                None => {
                                    exact = None;
                                    break;
                                }
                            }
                        }
                        match exact.as_mut() {
                            Some(e) => e.push(only),
                            None => break,
                        }
                    }
                    match exact {
                        Some(e) => branches = e,
                        None => self.relax(
                            ptr,
                            "oneOf",
                            "branches that may overlap, whose complements munch does not write",
                        )?,
                    }
                } else {
                    for b in branches.iter_mut() {
                        for s in b.iter_mut() {
                            s.types &= !excluded;
                        }
                        b.retain(|s| s.types != 0);
                    }
                }
            }
            let union: Vec<Simple> = branches.into_iter().flatten().collect();
            acc = self.cross(acc, union, ptr)?;
        }
        if let Some(n) = keyword(obj, "not") {
            let p = join(ptr, "not");
            let d = self.one(n, &p, depth + 1)?;
            match self.complement(&d, None, &p)? {
                Some(c) => acc = self.cross_or_relax(acc, c, ptr, "not")?,
                None => self.relax(
                    ptr,
                    "not",
                    "the complement of this schema is not one munch writes",
                )?,
            }
        }
        if let Some(cond) = keyword(obj, "if") {
            let p = join(ptr, "if");
            let i = self.one(cond, &p, depth + 1)?;
            let then = match keyword(obj, "then") {
                Some(t) => self.one(t, &join(ptr, "then"), depth + 1)?,
                None => vec![Simple::any()],
            };
            let els = match keyword(obj, "else") {
                Some(t) => self.one(t, &join(ptr, "else"), depth + 1)?,
                None => vec![Simple::any()],
            };
            let then_true = then.len() == 1 && then[0].types_only() && then[0].types == ty::ALL;
            let else_true = els.len() == 1 && els[0].types_only() && els[0].types == ty::ALL;
            if !(then_true && else_true) {
                let types: Option<u8> = i
                    .iter()
                    .try_fold(0u8, |t, s| s.types_only().then_some(t | s.types));
                match types {
                    Some(t) => {
                        let yes = self.cross(
                            vec![Simple {
                                types: t,
                                ..Simple::any()
                            }],
                            then,
                            &p,
                        )?;
                        let no = self.cross(
                            vec![Simple {
                                types: ty::ALL & !t,
                                ..Simple::any()
                            }],
                            els,
                            &p,
                        )?;
                        let union: Vec<Simple> = yes.into_iter().chain(no).collect();
                        acc = self.cross(acc, union, &p)?;
                    }
                    None => match self.complement(&i, None, &p)? {
                        Some(not_i) => {
                            let yes = self.cross(i, then, &p)?;
                            let no = self.cross(not_i, els, &p)?;
                            let union: Vec<Simple> = yes.into_iter().chain(no).collect();
                            acc = self.cross_or_relax(acc, union, ptr, "if")?;
                        }
                        None => self.relax(
                            ptr,
                            "if",
                            "the complement of the condition is not one munch writes",
                        )?,
                    },
                }
            }
        }
        Ok(acc)
    }

    /// [`Normalizer::cross`] for a keyword munch compiles through complements or dependencies:
    /// where two of the alternatives cannot be merged (an unsupported combination), the keyword
    /// is refused, or (lenient) relaxed and `acc` kept. `ptr` is the schema's pointer.
    fn cross_or_relax(
        &mut self,
        acc: Vec<Simple>,
        other: Vec<Simple>,
        ptr: &str,
        keyword: &str,
    ) -> Result<Vec<Simple>, SchemaError> {
        match self.cross(acc.clone(), other, &join(ptr, keyword)) {
            Err(e) if matches!(e.kind(), SchemaErrorKind::Unsupported { .. }) => {
                self.relax(ptr, keyword, &e.to_string())?;
                Ok(acc)
            }
            result => result,
        }
    }

    /// The values that no member of the disjunction `d` takes, as a disjunction: the cross of
    /// what each member rejects ([`rejected_by`]); `None` where one of those is not written.
    /// `within`: the union the complement will be intersected with, if known (some pieces are
    /// written only there).
    fn complement(
        &mut self,
        d: &[Simple],
        within: Option<&[Simple]>,
        ptr: &str,
    ) -> Result<Option<Vec<Simple>>, SchemaError> {
        let mut acc = vec![Simple::any()];
        for s in d {
            let Some(r) = rejected_by(s, within, ptr) else {
                return Ok(None);
            };
            acc = self.cross(acc, r, ptr)?;
        }
        Ok(Some(acc))
    }

    /// Whether no value satisfies both (conservatively: `false` when unsure).
    fn disjoint(&mut self, a: &Simple, b: &Simple, depth: usize) -> Result<bool, SchemaError> {
        let m = match merge(a, b, "")? {
            None => return Ok(true),
            Some(m) => m,
        };
        if let Some(vals) = &m.enum_ {
            let mut any = false;
            for v in vals.clone() {
                if self.admits(&m, &v, depth)? {
                    any = true;
                }
            }
            return Ok(!any);
        }
        // Objects told apart by a required property whose values cannot agree.
        if m.types == ty::OBJ {
            for k in &m.required {
                let c = m.schema_for(k)?;
                let d = self.normalize(&c, depth + 1)?;
                if d.is_empty() {
                    return Ok(true);
                }
                let mut all_empty = true;
                for s in &d {
                    if let Some(vals) = &s.enum_ {
                        for v in vals.clone() {
                            if self.admits(s, &v, depth)? {
                                all_empty = false;
                            }
                        }
                    } else {
                        all_empty = false;
                    }
                }
                if all_empty {
                    return Ok(true);
                }
            }
        }
        // Numbers told apart by bounds.
        if m.types & !(ty::INT | ty::FRAC) == 0 {
            if let (Some(lo), Some(hi)) = (&m.lo, &m.hi) {
                if lo.value > hi.value || (lo.value == hi.value && (lo.exclusive || hi.exclusive)) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The atomic keywords of one schema object as a [`Simple`].
    fn atomic(
        &mut self,
        obj: &serde_json::Map<String, Value>,
        ptr: &str,
    ) -> Result<Simple, SchemaError> {
        let mut s = Simple::any();
        s.obj_ptr = ptr.to_string();
        s.len_ptr = ptr.to_string();
        if let Some(t) = keyword(obj, "type") {
            let one = |v: &Value| -> Result<u8, SchemaError> {
                Ok(match v.as_str() {
                    Some("null") => ty::NULL,
                    Some("boolean") => ty::BOOL,
                    Some("integer") => ty::INT,
                    Some("number") => ty::INT | ty::FRAC,
                    Some("string") => ty::STR,
                    Some("array") => ty::ARR,
                    Some("object") => ty::OBJ,
                    _ => return Err(SchemaError::invalid(ptr, "type", "unknown type")),
                })
            };
            s.types = match t {
                Value::Array(a) => a.iter().try_fold(0, |acc, v| Ok(acc | one(v)?))?,
                v => one(v)?,
            };
        }
        if let Some(c) = keyword(obj, "const") {
            s.enum_ = Some(vec![c.clone()]);
            s.enum_ptr = join(ptr, "const");
        }
        if let Some(e) = keyword(obj, "enum") {
            let list = e
                .as_array()
                .ok_or_else(|| SchemaError::invalid(ptr, "enum", "not an array"))?;
            let list = match s.enum_.take() {
                Some(c) => list.iter().filter(|v| json_eq(v, &c[0])).cloned().collect(),
                None => list.clone(),
            };
            s.enum_ = Some(list);
            s.enum_ptr = join(ptr, "enum");
        }
        // Numbers.
        let num = |k: &str| -> Result<Option<Dec>, SchemaError> {
            match keyword(obj, k) {
                None => Ok(None),
                Some(Value::Number(n)) => Dec::parse(&n.to_string())
                    .map(Some)
                    .ok_or_else(|| SchemaError::invalid(ptr, k, "number out of range")),
                Some(Value::Bool(_)) if k.starts_with("exclusive") => Ok(None),
                Some(_) => Err(SchemaError::invalid(ptr, k, "not a number")),
            }
        };
        // Draft-04 spells exclusiveness as a boolean beside minimum/maximum.
        let flag = |k: &str| matches!(keyword(obj, k), Some(Value::Bool(true)));
        for (k, exclusive) in [
            ("minimum", flag("exclusiveMinimum")),
            ("exclusiveMinimum", true),
        ] {
            if let Some(value) = num(k)? {
                s.lo = tighter_lo(s.lo, Bound { value, exclusive });
            }
        }
        for (k, exclusive) in [
            ("maximum", flag("exclusiveMaximum")),
            ("exclusiveMaximum", true),
        ] {
            if let Some(value) = num(k)? {
                s.hi = tighter_hi(s.hi, Bound { value, exclusive });
            }
        }
        if let Some(m) = num("multipleOf")? {
            if m.neg || m == Dec::zero() {
                return Err(SchemaError::invalid(ptr, "multipleOf", "must be positive"));
            }
            s.multiple_of.push((m, join(ptr, "multipleOf")));
        }
        // Strings.
        let count = |k: &str| -> Result<Option<u64>, SchemaError> {
            match keyword(obj, k) {
                None => Ok(None),
                Some(v) => {
                    let d = v
                        .as_f64()
                        .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                        .ok_or_else(|| {
                            SchemaError::invalid(ptr, k, "not a non-negative integer")
                        })?;
                    Ok(Some(if d > 1e15 { u64::MAX / 2 } else { d as u64 }))
                }
            }
        };
        if let Some(n) = count("minLength")? {
            s.min_len = n;
        }
        s.max_len = count("maxLength")?;
        if let Some(p) = keyword(obj, "pattern") {
            let p = p
                .as_str()
                .ok_or_else(|| SchemaError::invalid(ptr, "pattern", "not a string"))?;
            let at = join(ptr, "pattern");
            // Look-arounds that test the whole string become patterns to match and not to.
            match crate::ecma::split_look_arounds(p) {
                Some(split) => {
                    s.patterns
                        .extend(split.all.into_iter().map(|q| (q, at.clone())));
                    s.not_patterns
                        .extend(split.none.into_iter().map(|q| (q, at.clone())));
                }
                None => s.patterns.push((p.to_string(), at)),
            }
        }
        if let Some(f) = keyword(obj, "format") {
            let f = f
                .as_str()
                .ok_or_else(|| SchemaError::invalid(ptr, "format", "not a string"))?;
            // Formats munch does not know (`int64`, `password`, ...) are annotations, as the
            // specification has every format by default and as validators treat unknown ones.
            if crate::format::FORMATS.contains(&f) {
                s.formats.push((f.to_string(), join(ptr, "format")));
            }
        }
        // Arrays: 2020-12 `prefixItems` + `items`, or draft-07 `items: [...]` +
        // `additionalItems`.
        let sub = |k: &str| Sub {
            value: keyword(obj, k).cloned().unwrap_or(Value::Bool(true)),
            ptr: join(ptr, k),
        };
        let tuple = |k: &str, v: &Value| -> Result<Vec<Conj>, SchemaError> {
            let a = v
                .as_array()
                .ok_or_else(|| SchemaError::invalid(ptr, k, "not an array"))?;
            Ok(a.iter()
                .enumerate()
                .map(|(i, x)| {
                    vec![Sub {
                        value: x.clone(),
                        ptr: join(&join(ptr, k), &i.to_string()),
                    }]
                })
                .collect())
        };
        if let Some(p) = keyword(obj, "prefixItems") {
            s.prefix = tuple("prefixItems", p)?;
            if obj.contains_key("items") {
                s.items = vec![sub("items")];
            }
        } else {
            match keyword(obj, "items") {
                Some(v @ Value::Array(_)) => {
                    s.prefix = tuple("items", v)?;
                    if obj.contains_key("additionalItems") {
                        s.items = vec![sub("additionalItems")];
                    }
                }
                Some(_) => s.items = vec![sub("items")],
                None => {}
            }
        }
        if let Some(n) = count("minItems")? {
            s.min_items = n;
        }
        s.max_items = count("maxItems")?;
        if obj.contains_key("contains") {
            let min = count("minContains")?.unwrap_or(1);
            let max = count("maxContains")?;
            s.contains.push(Contains {
                schema: vec![sub("contains")],
                min,
                max,
                ptr: join(ptr, "contains"),
            });
        }
        if keyword(obj, "uniqueItems") == Some(&Value::Bool(true)) {
            s.unique = Some(join(ptr, "uniqueItems"));
        }
        // Objects.
        if let Some(p) = keyword(obj, "properties") {
            let m = p
                .as_object()
                .ok_or_else(|| SchemaError::invalid(ptr, "properties", "not an object"))?;
            for (k, v) in m {
                s.props.push((
                    k.clone(),
                    vec![Sub {
                        value: v.clone(),
                        ptr: join(&join(ptr, "properties"), k),
                    }],
                ));
            }
        }
        if let Some(r) = keyword(obj, "required") {
            let a = r
                .as_array()
                .ok_or_else(|| SchemaError::invalid(ptr, "required", "not an array"))?;
            for k in a {
                let k = k
                    .as_str()
                    .ok_or_else(|| SchemaError::invalid(ptr, "required", "not a string"))?;
                if !s.required.iter().any(|r| r == k) {
                    s.required.push(k.to_string());
                }
            }
        }
        if obj.contains_key("additionalProperties") {
            s.additional = vec![sub("additionalProperties")];
        }
        if let Some(p) = keyword(obj, "patternProperties") {
            let m = p
                .as_object()
                .ok_or_else(|| SchemaError::invalid(ptr, "patternProperties", "not an object"))?;
            for (k, v) in m {
                let pp = join(&join(ptr, "patternProperties"), k);
                s.pattern_props.push((
                    k.clone(),
                    vec![Sub {
                        value: v.clone(),
                        ptr: pp.clone(),
                    }],
                    pp,
                ));
            }
        }
        if obj.contains_key("propertyNames") {
            s.names = vec![sub("propertyNames")];
        }
        if let Some(n) = count("minProperties")? {
            s.min_props = n;
        }
        s.max_props = count("maxProperties")?;
        Ok(s)
    }

    /// Whether `v` is valid under `s`.
    pub fn admits(&mut self, s: &Simple, v: &Value, depth: usize) -> Result<bool, SchemaError> {
        if depth > self.max_depth {
            return Err(SchemaError::budget("max_depth", self.max_depth, &s.obj_ptr));
        }
        if let Some(e) = &s.enum_ {
            if !e.iter().any(|x| json_eq(x, v)) {
                return Ok(false);
            }
        }
        match v {
            Value::Null => Ok(s.types & ty::NULL != 0),
            Value::Bool(_) => Ok(s.types & ty::BOOL != 0),
            Value::Number(n) => {
                let Some(d) = Dec::parse(&n.to_string()) else {
                    return Err(SchemaError::unsupported(&s.enum_ptr, "enum", "huge number"));
                };
                let t = if d.is_integer() { ty::INT } else { ty::FRAC };
                if s.types & t == 0 {
                    return Ok(false);
                }
                if let Some(lo) = &s.lo {
                    if d < lo.value || (lo.exclusive && d == lo.value) {
                        return Ok(false);
                    }
                }
                if let Some(hi) = &s.hi {
                    if d > hi.value || (hi.exclusive && d == hi.value) {
                        return Ok(false);
                    }
                }
                for (m, ptr) in &s.multiple_of {
                    match crate::number::is_multiple(&d, m) {
                        Some(ok) if !ok => return Ok(false),
                        Some(_) => {}
                        None => {
                            return Err(SchemaError::unsupported(
                                ptr,
                                "multipleOf",
                                "too many digits to check",
                            ))
                        }
                    }
                }
                Ok(true)
            }
            Value::String(st) => {
                if s.types & ty::STR == 0 || s.excluded.contains(st) {
                    return Ok(false);
                }
                let n = st.chars().count() as u64;
                if n < s.min_len || s.max_len.is_some_and(|m| n > m) {
                    return Ok(false);
                }
                for (p, ptr) in &s.patterns {
                    if !pattern_matches(p, st, ptr)? {
                        return Ok(false);
                    }
                }
                for (f, ptr) in &s.formats {
                    let p = crate::format::pattern(f).unwrap_or_default();
                    if !pattern_matches(&p, st, ptr)? {
                        return Ok(false);
                    }
                }
                for (p, ptr) in &s.not_patterns {
                    if pattern_matches(p, st, ptr)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Value::Array(a) => {
                if s.types & ty::ARR == 0 {
                    return Ok(false);
                }
                let n = a.len() as u64;
                if n < s.min_items || s.max_items.is_some_and(|m| n > m) {
                    return Ok(false);
                }
                for (i, x) in a.iter().enumerate() {
                    let c = s.prefix.get(i).unwrap_or(&s.items).clone();
                    if !self.admits_conj(&c, x, depth + 1)? {
                        return Ok(false);
                    }
                }
                for c in &s.contains {
                    let mut k = 0u64;
                    for x in a {
                        if self.admits_conj(&c.schema, x, depth + 1)? {
                            k += 1;
                        }
                    }
                    if k < c.min || c.max.is_some_and(|m| k > m) {
                        return Ok(false);
                    }
                }
                if s.unique.is_some() {
                    for i in 0..a.len() {
                        for j in i + 1..a.len() {
                            if json_eq(&a[i], &a[j]) {
                                return Ok(false);
                            }
                        }
                    }
                }
                Ok(true)
            }
            Value::Object(o) => {
                if s.types & ty::OBJ == 0 {
                    return Ok(false);
                }
                let n = o.len() as u64;
                if n < s.min_props || s.max_props.is_some_and(|m| n > m) {
                    return Ok(false);
                }
                if s.required.iter().any(|k| !o.contains_key(k)) {
                    return Ok(false);
                }
                let names = s.names.clone();
                for (k, x) in o {
                    if !names.is_empty()
                        && !self.admits_conj(&names, &Value::String(k.clone()), depth + 1)?
                    {
                        return Ok(false);
                    }
                    let c = s.schema_for(k)?;
                    if !self.admits_conj(&c, x, depth + 1)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }

    pub fn admits_conj(&mut self, c: &Conj, v: &Value, depth: usize) -> Result<bool, SchemaError> {
        if c.is_empty() {
            return Ok(true);
        }
        let d = self.normalize(c, depth + 1)?;
        for s in &d {
            if self.admits(s, v, depth + 1)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn tighter_lo(a: Option<Bound>, b: Bound) -> Option<Bound> {
    Some(match a {
        None => b,
        Some(a) => match a.value.cmp(&b.value) {
            std::cmp::Ordering::Less => b,
            std::cmp::Ordering::Greater => a,
            std::cmp::Ordering::Equal => Bound {
                value: a.value,
                exclusive: a.exclusive || b.exclusive,
            },
        },
    })
}

fn tighter_hi(a: Option<Bound>, b: Bound) -> Option<Bound> {
    Some(match a {
        None => b,
        Some(a) => match a.value.cmp(&b.value) {
            std::cmp::Ordering::Greater => b,
            std::cmp::Ordering::Less => a,
            std::cmp::Ordering::Equal => Bound {
                value: a.value,
                exclusive: a.exclusive || b.exclusive,
            },
        },
    })
}

/// JSON equality as JSON Schema has it: numbers by value (`1 == 1.0`), objects by members.
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (Dec::parse(&x.to_string()), Dec::parse(&y.to_string())) {
                (Some(x), Some(y)) => x == y,
                _ => x == y,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// The intersection of two simple schemas; `None` when no value satisfies both.
pub(crate) fn merge(a: &Simple, b: &Simple, ptr: &str) -> Result<Option<Simple>, SchemaError> {
    let mut m = a.clone();
    for (mine, theirs) in [
        (&mut m.obj_ptr, &b.obj_ptr),
        (&mut m.len_ptr, &b.len_ptr),
        (&mut m.enum_ptr, &b.enum_ptr),
    ] {
        if mine.is_empty() {
            mine.clone_from(theirs);
        }
    }
    m.types &= b.types;
    if m.types == 0 {
        return Ok(None);
    }
    if let Some(be) = &b.enum_ {
        m.enum_ = Some(match m.enum_.take() {
            None => {
                m.enum_ptr = b.enum_ptr.clone();
                be.clone()
            }
            Some(ae) => ae
                .into_iter()
                .filter(|x| be.iter().any(|y| json_eq(x, y)))
                .collect(),
        });
    }
    if let Some(lo) = &b.lo {
        m.lo = tighter_lo(m.lo, lo.clone());
    }
    if let Some(hi) = &b.hi {
        m.hi = tighter_hi(m.hi, hi.clone());
    }
    m.multiple_of.extend(b.multiple_of.iter().cloned());
    m.min_len = m.min_len.max(b.min_len);
    m.max_len = min_opt(m.max_len, b.max_len);
    for p in &b.patterns {
        if !m.patterns.iter().any(|q| q.0 == p.0) {
            m.patterns.push(p.clone());
        }
    }
    for f in &b.formats {
        if !m.formats.iter().any(|q| q.0 == f.0) {
            m.formats.push(f.clone());
        }
    }
    for x in &b.excluded {
        if !m.excluded.contains(x) {
            m.excluded.push(x.clone());
        }
    }
    for p in &b.not_patterns {
        if !m.not_patterns.iter().any(|q| q.0 == p.0) {
            m.not_patterns.push(p.clone());
        }
    }
    if let Some(e) = m.enum_.as_mut() {
        let excluded = &m.excluded;
        e.retain(|v| !matches!(v, Value::String(x) if excluded.contains(x)));
    }
    // Arrays.
    let n = a.prefix.len().max(b.prefix.len());
    let mut prefix = Vec::with_capacity(n);
    for i in 0..n {
        let mut c = a.prefix.get(i).unwrap_or(&a.items).clone();
        c.extend(b.prefix.get(i).unwrap_or(&b.items).iter().cloned());
        prefix.push(c);
    }
    m.prefix = prefix;
    m.items.extend(b.items.iter().cloned());
    m.min_items = m.min_items.max(b.min_items);
    m.max_items = min_opt(m.max_items, b.max_items);
    m.contains.extend(b.contains.iter().cloned());
    if m.unique.is_none() {
        m.unique = b.unique.clone();
    }
    // Objects.
    let a_obj = has_object_keywords(a);
    let b_obj = has_object_keywords(b);
    if a_obj && b_obj {
        if !a.pattern_props.is_empty() || !b.pattern_props.is_empty() {
            return Err(SchemaError::unsupported(
                ptr,
                "patternProperties",
                "combined (allOf) with another object schema",
            ));
        }
        let mut props: Vec<(String, Conj)> = Vec::new();
        let keys: Vec<String> = a
            .props
            .iter()
            .map(|(k, _)| k.clone())
            .chain(b.props.iter().map(|(k, _)| k.clone()))
            .collect();
        for k in keys {
            if props.iter().any(|(x, _)| *x == k) {
                continue;
            }
            let mut c = a.schema_for(&k)?;
            c.extend(b.schema_for(&k)?);
            props.push((k, c));
        }
        m.props = props;
        m.additional = a.additional.clone();
        m.additional.extend(b.additional.iter().cloned());
    } else if b_obj {
        m.props = b.props.clone();
        m.additional = b.additional.clone();
        m.pattern_props = b.pattern_props.clone();
        m.obj_ptr = b.obj_ptr.clone();
    }
    for r in &b.required {
        if !m.required.contains(r) {
            m.required.push(r.clone());
        }
    }
    m.names.extend(b.names.iter().cloned());
    m.min_props = m.min_props.max(b.min_props);
    m.max_props = min_opt(m.max_props, b.max_props);
    // A required key that no value may take leaves no object.
    if m.types & ty::OBJ != 0
        && m.required
            .iter()
            .any(|k| m.props.iter().any(|(p, c)| p == k && is_false(c)))
    {
        m.types &= !ty::OBJ;
        if m.types == 0 {
            return Ok(None);
        }
    }
    Ok(Some(m))
}

/// The values one [`Simple`] rejects, as a disjunction: the values of other types, and for each
/// constraint the values of its type that break it. Written for the types, `enum`/`const` over
/// null, booleans, numbers and strings (and over types none of its values has), numeric
/// bounds, string lengths, patterns and formats (the strings they do not match), excluded
/// strings, array lengths, `prefixItems`, `items` beside no prefix (an item under `not` of it:
/// `contains`), `contains` of at least one (every item under `not` of it), `required` (an
/// object without the key: the key's schema `false`) and `properties` (an object with the key,
/// its value under `not` of the key's schema, left for the normaliser to complement in turn);
/// `None` where another constraint is set.
///
/// `additionalProperties: false` (with no `patternProperties` or `propertyNames`) is written
/// only `within` a union whose objects are closed in turn: an object there that has a key the
/// closed one does not declare has one of its own declared keys that the closed one lacks,
/// so the piece is "requires that key", for each such key.
fn rejected_by(s: &Simple, within: Option<&[Simple]>, ptr: &str) -> Option<Vec<Simple>> {
    let kinds = ty::KINDS;
    let mut out = Vec::new();
    let others = ty::ALL & !s.types;
    if others != 0 {
        out.push(Simple {
            types: others,
            ..Simple::any()
        });
    }
    let of_kind = |t: u8| Simple {
        types: t,
        ..Simple::any()
    };
    if let Some(values) = &s.enum_ {
        let plain = Simple {
            enum_: None,
            ..s.clone()
        };
        for t in kinds.into_iter().filter(|&t| s.types & t != 0) {
            if !plain.takes_all(t) {
                return None;
            }
            let kind_of = |v: &Value| match v {
                Value::Null => ty::NULL,
                Value::Bool(_) => ty::BOOL,
                Value::Number(_) => ty::INT | ty::FRAC,
                Value::String(_) => ty::STR,
                Value::Array(_) => ty::ARR,
                Value::Object(_) => ty::OBJ,
            };
            let listed: Vec<&Value> = values.iter().filter(|v| kind_of(v) & t != 0).collect();
            match t {
                _ if listed.is_empty() => out.push(of_kind(t)),
                ty::NULL => {}
                ty::STR => out.push(Simple {
                    types: ty::STR,
                    excluded: listed
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                    enum_ptr: ptr.to_string(),
                    ..Simple::any()
                }),
                // The numbers between and beyond the listed ones.
                ty::INT | ty::FRAC => {
                    let mut values = listed
                        .iter()
                        .map(|v| Dec::parse(&v.to_string()))
                        .collect::<Option<Vec<Dec>>>()?;
                    values.sort();
                    values.dedup();
                    let open = |value: &Dec| Bound {
                        value: value.clone(),
                        exclusive: true,
                    };
                    let mut lo = None;
                    for v in &values {
                        out.push(Simple {
                            types: t,
                            lo,
                            hi: Some(open(v)),
                            ..Simple::any()
                        });
                        lo = Some(open(v));
                    }
                    out.push(Simple {
                        types: t,
                        lo,
                        ..Simple::any()
                    });
                }
                ty::BOOL => {
                    let rest: Vec<Value> = [false, true]
                        .into_iter()
                        .map(Value::Bool)
                        .filter(|b| !listed.contains(&b))
                        .collect();
                    if !rest.is_empty() {
                        out.push(Simple {
                            types: ty::BOOL,
                            enum_: Some(rest),
                            enum_ptr: ptr.to_string(),
                            ..Simple::any()
                        });
                    }
                }
                _ => return None,
            }
        }
        return Some(out);
    }
    let unconstrained = Simple {
        required: Vec::new(),
        props: Vec::new(),
        lo: None,
        hi: None,
        min_len: 0,
        max_len: None,
        excluded: Vec::new(),
        patterns: Vec::new(),
        formats: Vec::new(),
        not_patterns: Vec::new(),
        ..s.clone()
    };
    // Array constraints with complements: lengths, `prefixItems`, `items` beside no prefix,
    // `contains` of at least one.
    let arrays = (s.prefix.is_empty() || is_true(&s.items))
        && s.contains.iter().all(|c| c.min <= 1 && c.max.is_none());
    let unconstrained = if arrays {
        Simple {
            prefix: Vec::new(),
            items: Vec::new(),
            min_items: 0,
            max_items: None,
            contains: Vec::new(),
            ..unconstrained
        }
    } else {
        unconstrained
    };
    let closed = s.types & ty::OBJ != 0
        && is_false(&s.additional)
        && s.pattern_props.is_empty()
        && s.names.is_empty();
    // The keys, declared by the union's objects, that a closed `s` forbids; `None` when some
    // object of the union may have a key it does not declare.
    let extra_keys = match (closed, within) {
        (true, Some(within)) => {
            let mut keys: Vec<String> = Vec::new();
            let mut all_closed = true;
            for w in within.iter().filter(|w| w.types & ty::OBJ != 0) {
                if !(is_false(&w.additional) && w.pattern_props.is_empty()) {
                    all_closed = false;
                    break;
                }
                for (k, _) in &w.props {
                    if !s.props.iter().any(|(p, _)| p == k) && !keys.contains(k) {
                        keys.push(k.clone());
                    }
                }
            }
            all_closed.then_some(keys)
        }
        _ => None,
    };
    let unconstrained = if extra_keys.is_some() {
        Simple {
            additional: Vec::new(),
            ..unconstrained
        }
    } else {
        unconstrained
    };
    if kinds
        .into_iter()
        .any(|t| s.types & t != 0 && !unconstrained.takes_all(t))
    {
        return None;
    }
    // A number below the least or above the most.
    let numbers = s.types & (ty::INT | ty::FRAC);
    if numbers != 0 {
        let beyond = |b: &Bound| Bound {
            value: b.value.clone(),
            exclusive: !b.exclusive,
        };
        if let Some(lo) = &s.lo {
            out.push(Simple {
                types: numbers,
                hi: Some(beyond(lo)),
                ..Simple::any()
            });
        }
        if let Some(hi) = &s.hi {
            out.push(Simple {
                types: numbers,
                lo: Some(beyond(hi)),
                ..Simple::any()
            });
        }
    }
    // A string shorter than the least or longer than the most.
    if s.types & ty::STR != 0 {
        if s.min_len > 0 {
            out.push(Simple {
                types: ty::STR,
                max_len: Some(s.min_len - 1),
                len_ptr: ptr.to_string(),
                ..Simple::any()
            });
        }
        if let Some(m) = s.max_len {
            out.push(Simple {
                types: ty::STR,
                min_len: m + 1,
                len_ptr: ptr.to_string(),
                ..Simple::any()
            });
        }
    }
    // A string that some pattern or format does not match, or that a refused one matches.
    if s.types & ty::STR != 0 {
        let formats = s.formats.iter().map(|(f, ptr)| {
            let p = crate::format::pattern(f).unwrap_or_default();
            (p, ptr.clone())
        });
        for (p, ptr) in s.patterns.iter().cloned().chain(formats) {
            out.push(Simple {
                types: ty::STR,
                not_patterns: vec![(p, ptr)],
                ..Simple::any()
            });
        }
        for (p, ptr) in &s.not_patterns {
            out.push(Simple {
                types: ty::STR,
                patterns: vec![(p.clone(), ptr.clone())],
                ..Simple::any()
            });
        }
    }
    if s.types & ty::STR != 0 && !s.excluded.is_empty() {
        out.push(Simple {
            types: ty::STR,
            enum_: Some(s.excluded.iter().cloned().map(Value::String).collect()),
            enum_ptr: ptr.to_string(),
            ..Simple::any()
        });
    }
    // An array too short or too long, with an item that breaks its place's schema, or with
    // no item that `contains` takes.
    if s.types & ty::ARR != 0 {
        let array = |f: &dyn Fn(&mut Simple)| {
            let mut a = Simple {
                types: ty::ARR,
                ..Simple::any()
            };
            f(&mut a);
            a
        };
        let not = |conj: &Conj| {
            vec![Sub {
                value: serde_json::json!({ "not": conj_schema(conj) }),
                ptr: ptr.to_string(),
            }]
        };
        if s.min_items > 0 {
            out.push(array(&|a| a.max_items = Some(s.min_items - 1)));
        }
        if let Some(m) = s.max_items {
            out.push(array(&|a| a.min_items = m + 1));
        }
        for (i, conj) in s.prefix.iter().enumerate() {
            if !is_true(conj) {
                out.push(array(&|a| {
                    a.min_items = i as u64 + 1;
                    a.prefix = vec![Vec::new(); i];
                    a.prefix.push(not(conj));
                }));
            }
        }
        if s.prefix.is_empty() && !is_true(&s.items) {
            out.push(array(&|a| {
                a.contains = vec![Contains {
                    schema: not(&s.items),
                    min: 1,
                    max: None,
                    ptr: ptr.to_string(),
                }]
            }));
        }
        for c in s.contains.iter().filter(|c| c.min == 1) {
            out.push(array(&|a| a.items = not(&c.schema)));
        }
    }
    if s.types & ty::OBJ == 0 {
        return Some(out);
    }
    let object = |required: Vec<String>, key: &str, value: Value| Simple {
        types: ty::OBJ,
        required,
        props: vec![(
            key.to_string(),
            vec![Sub {
                value,
                ptr: ptr.to_string(),
            }],
        )],
        obj_ptr: ptr.to_string(),
        ..Simple::any()
    };
    // Pieces that are empty within the union are left out: an object there that must have
    // the key, or whose value for it meets the same schema (or that cannot have it).
    let union_objects = || {
        within
            .into_iter()
            .flatten()
            .filter(|w| w.types & ty::OBJ != 0)
    };
    let always_has =
        |k: &String| within.is_some() && union_objects().all(|w| w.required.contains(k));
    let same_value = |k: &String, conj: &Conj| {
        within.is_some()
            && union_objects().all(|w| match w.props.iter().find(|(p, _)| p == k) {
                Some((_, c)) => same_conj(c, conj),
                None => is_false(&w.additional) && w.pattern_props.is_empty(),
            })
    };
    for k in s.required.iter().filter(|k| !always_has(k)) {
        out.push(object(Vec::new(), k, Value::Bool(false)));
    }
    for k in extra_keys.iter().flatten() {
        out.push(Simple {
            types: ty::OBJ,
            required: vec![k.clone()],
            obj_ptr: ptr.to_string(),
            ..Simple::any()
        });
    }
    for (k, conj) in &s.props {
        if is_true(conj) || same_value(k, conj) {
            continue;
        }
        out.push(object(
            vec![k.clone()],
            k,
            serde_json::json!({ "not": conj_schema(conj) }),
        ));
    }
    Some(out)
}

/// One schema for a conjunction.
fn conj_schema(conj: &Conj) -> Value {
    match &conj[..] {
        [one] => one.value.clone(),
        all => serde_json::json!({ "allOf": all.iter().map(|c| &c.value).collect::<Vec<_>>() }),
    }
}

/// Whether two conjunctions are the same schemas, written the same way.
fn same_conj(a: &Conj, b: &Conj) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.value == y.value)
}

/// Whether `s` says anything about an object's members (`additionalProperties: true` does not).
fn has_object_keywords(s: &Simple) -> bool {
    !s.props.is_empty() || !is_true(&s.additional) || !s.pattern_props.is_empty()
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

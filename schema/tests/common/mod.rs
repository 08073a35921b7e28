//! Loading compiled schemas with munch's parser and checking whole texts.

#![allow(dead_code)]

use std::sync::Arc;

use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_schema::{compile, SchemaOptions};
use serde_json::Value;

/// The parser of a schema's Lark text (loaded as `Grammar::from_json_schema` loads it: its
/// intersection groups read as such), or the loader's or the parser builder's message.
pub fn parser(lark: &str) -> Result<Arc<Parser>, String> {
    let load = munch_glr::lark::LoadConfig {
        meets: true,
        ..Default::default()
    };
    let grammar = munch_glr::lark::load(lark.as_bytes(), &load).map_err(|e| e.to_string())?;
    Parser::new(&grammar, &ParserConfig::default())
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// Whether `text` is a whole sentence.
pub fn accepts(parser: &Arc<Parser>, text: &str) -> bool {
    let mut s = ParserState::new(Arc::clone(parser));
    s.commit_bytes(text.as_bytes()).is_ok() && s.is_accepting()
}

/// The parser of a schema's grammar (panics with the grammar when it does not load).
pub fn schema_parser(schema: &Value, options: &SchemaOptions) -> Arc<Parser> {
    let c = compile(schema, options).unwrap_or_else(|e| panic!("{e}"));
    parser(c.lark()).unwrap_or_else(|e| panic!("{e}\n{}", c.lark()))
}

/// A JSON text for `v`, compact, numbers written without exponent (munch's profile under
/// bounds), strings as serde_json writes them.
pub fn to_text(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Number(n) => out.push_str(&plain(&n.to_string())),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push(':');
                write(x, out);
            }
            out.push('}');
        }
        v => out.push_str(&serde_json::to_string(v).unwrap()),
    }
}

/// `1e3` → `1000`, `1.5e-2` → `0.015`; other texts unchanged.
fn plain(t: &str) -> String {
    let Some(e) = t.find(['e', 'E']) else {
        return t.to_string();
    };
    let exp: i64 = t[e + 1..].trim_start_matches('+').parse().unwrap_or(0);
    if exp.abs() > 400 {
        return t.to_string();
    }
    let (neg, m) = match t[..e].strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, &t[..e]),
    };
    let (ip, fp) = m.split_once('.').unwrap_or((m, ""));
    let digits: String = format!("{ip}{fp}");
    let point = ip.len() as i64 + exp;
    let s = if point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    };
    let s = s.trim_start_matches('0');
    let s = if s.is_empty() || s.starts_with('.') {
        format!("0{s}")
    } else {
        s.to_string()
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if neg {
        format!("-{s}")
    } else {
        s
    }
}

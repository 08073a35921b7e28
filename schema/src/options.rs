//! [`SchemaOptions`]: the output profile (whitespace, separators, property order), leniency and
//! budgets.

/// Where whitespace may appear in the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whitespace {
    /// None at all: `{"a":1,"b":[true,null]}` (with the default separators).
    Compact,
    /// Between any two tokens (and before and after the value), runs of at most `max_run`
    /// whitespace characters (space, tab, newline, carriage return). A bound keeps a model from
    /// rambling in whitespace until it runs out of tokens.
    Flexible {
        /// The longest run of consecutive whitespace characters (at least 1).
        max_run: usize,
    },
}

/// The order in which an object's declared properties appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyOrder {
    /// In the order the schema declares them (`properties`), each at most once, optional ones
    /// possibly skipped; other properties (`additionalProperties`, `patternProperties`) after
    /// them. Cheap: a grammar linear in the number of properties.
    Schema,
    /// Any order, each declared property at most once, other properties anywhere. Needs a state
    /// per subset of declared properties, so an object with more than
    /// [`SchemaOptions::max_any_order_properties`] declared properties is an error.
    Any,
}

/// How a schema is compiled. [`SchemaOptions::default`] is the profile a model is best served
/// with: flexible whitespace of at most 16 characters per run, `,` and `:` separators, properties
/// in schema order, strict (every keyword exact or an error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaOptions {
    /// Whitespace between tokens (default: flexible, runs of at most 16).
    pub whitespace: Whitespace,
    /// The separator between array items and object members (default `","`). It must hold one
    /// `,` and otherwise only whitespace characters, such as `", "`.
    pub item_separator: String,
    /// The separator between a key and its value (default `":"`). It must hold one `:` and
    /// otherwise only whitespace characters, such as `": "`.
    pub key_separator: String,
    /// Property order (default: schema order).
    pub property_order: PropertyOrder,
    /// Relax what cannot be compiled exactly instead of failing, and list each relaxation in
    /// [`crate::CompiledSchema::relaxations`] (default off). A relaxation widens the language:
    /// with it, some invalid instances are accepted.
    pub lenient: bool,
    /// The deepest chain of `$ref`/`allOf`/`anyOf` resolved at one place (default 64).
    pub max_depth: usize,
    /// The most grammar rules the schema may compile to (default 20,000).
    pub max_rules: usize,
    /// The most alternatives `anyOf`/`oneOf`/`allOf` distribution may produce at one place
    /// (default 256).
    pub max_alternatives: usize,
    /// The most declared properties an object may have under [`PropertyOrder::Any`]
    /// (default 8: 256 subsets).
    pub max_any_order_properties: usize,
    /// The largest `minItems`/`maxItems`/`minProperties`/`maxProperties`/`minContains`/
    /// `maxContains` bound compiled to counting rules (default 1,000).
    pub max_count: usize,
    /// The largest `minLength`/`maxLength` compiled into a string terminal (default 10,000).
    pub max_length: usize,
    /// The most bytes of Lark text the schema may compile to (default 8 MiB).
    pub max_grammar_bytes: usize,
}

impl Default for SchemaOptions {
    fn default() -> Self {
        SchemaOptions {
            whitespace: Whitespace::Flexible { max_run: 16 },
            item_separator: ",".to_string(),
            key_separator: ":".to_string(),
            property_order: PropertyOrder::Schema,
            lenient: false,
            max_depth: 64,
            max_rules: 20_000,
            max_alternatives: 256,
            max_any_order_properties: 8,
            max_count: 1_000,
            max_length: 10_000,
            max_grammar_bytes: 8 << 20,
        }
    }
}

impl SchemaOptions {
    /// The default options with compact whitespace.
    pub fn compact() -> SchemaOptions {
        SchemaOptions {
            whitespace: Whitespace::Compact,
            ..SchemaOptions::default()
        }
    }
}

//! The Rust printer for large functions: [`to_rust`]'s code as statements
//! in chunks of bounded size ([`to_rust_chunked`]), and with the
//! statements of repeated structure as loops over tables
//! ([`to_rust_looped`]).
//!
//! [`to_rust`]: crate::to_rust

use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::node::{ExprId, Leaf, Node};
use crate::pool::ExprPool;
use crate::print::{R, R_IF, R_POSTFIX, RustNames, is_rust_let, num_ctx, rust_node, rust_uses};

/// The statements of [`crate::to_rust`]'s code split into chunks of
/// bounded size (see [`to_rust_chunked`] and [`to_rust_looped`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RustChunks {
    /// The statements of each chunk, in order: `let sK: f64 = …;` (or
    /// `: bool`) for a common subexpression (followed by `sf[i] = sK;` or
    /// `sb[i] = sK;` when a later chunk or a loop reads it), `out[i] = …;`
    /// for root `i`, and (from [`to_rust_looped`] only) loops `for r in
    /// TABLE.iter() { … }` over the rows of one of [`RustChunks::tables`],
    /// which read and write common subexpressions in `sf` and `sb`. A chunk
    /// reads the common subexpressions of earlier chunks and of loops as
    /// `sf[i]` (`f64`) and `sb[i]` (`bool`).
    pub chunks: Vec<Vec<String>>,
    /// Length of the `f64` array `sf` the chunks share.
    pub scratch_f64: usize,
    /// Length of the `bool` array `sb` the chunks share.
    pub scratch_bool: usize,
    /// The tables of the loops, as items of a module: `static NAME:
    /// [[u16; C]; M] = …;` (`u32` when an index needs it), one row per
    /// statement of the loop: where it writes, then the index of each
    /// value it reads (for a constant, its index in
    /// [`RustChunks::constants`]). The entries are a byte string transmuted to the
    /// array, in the byte order of the machine that generated the text:
    /// the code is for a library built on that machine, for it.
    pub tables: Vec<String>,
    /// The number of rows of each table (statements printed as one loop
    /// body), in the order of [`RustChunks::tables`].
    pub loop_rows: Vec<usize>,
    /// The constants the loops read, as an item of a module: `static
    /// {prefix}K: [f64; M] = …;`, the bits of each distinct constant in
    /// the order the tables first name it, as a byte string transmuted to
    /// the array like the tables' entries (each value exactly the
    /// literal's). Empty when no loop reads a constant. A table's column
    /// of a constant holds its index into this array.
    pub constants: String,
    /// The arrays the loops index (`out`, `sf`, `sb` and those of
    /// [`RustNames::var_array`] and [`RustNames::param_array`]), each with
    /// the length it needs (one more than the largest index of a table
    /// into it), in the order of their names. The loops index without
    /// bounds checks (`get_unchecked`, in `unsafe` blocks), so the code
    /// is sound only where every array is at least that long; a caller
    /// asserts it in the code it wraps around the chunks.
    pub loop_reach: Vec<(String, usize)>,
}

/// A statement before the names of the common subexpressions it reads
/// are fixed: those are marked `\u{1}K\u{2}`.
struct Pending {
    text: String,
    /// `Some(k)` for `let sK`, `None` for an output.
    def: Option<usize>,
    /// The node whose value the statement computes.
    top: ExprId,
    /// The root for an output.
    root: Option<usize>,
}

/// The order [`to_rust_chunked`] prints in: each root's operands (children
/// before parents, depth first, each node once) right before the root, so
/// the statements of a root stay close together.
fn rooted_order(pool: &ExprPool, roots: &[ExprId]) -> Vec<(ExprId, Option<usize>)> {
    // the nodes expanded (their children pushed) or printed
    let mut seen: FxHashSet<ExprId> = FxHashSet::default();
    let mut out = Vec::new();
    // (node, whether its children are printed)
    let mut stack: Vec<(ExprId, bool)> = Vec::new();
    for (i, &root) in roots.iter().enumerate() {
        stack.push((root, false));
        while let Some((id, done)) = stack.pop() {
            if done {
                out.push((id, None));
                continue;
            }
            if !seen.insert(id) {
                continue;
            }
            stack.push((id, true));
            let children: Vec<ExprId> = pool.node(id).children().collect();
            for c in children.into_iter().rev() {
                if !seen.contains(&c) {
                    stack.push((c, false));
                }
            }
        }
        out.push((root, Some(i)));
    }
    out
}

/// The statements of `roots` in [`rooted_order`], each expression printed
/// as [`crate::to_rust`] prints it, the common subexpressions marked; with
/// the common subexpressions by node and whether each is a `bool`.
struct Printed {
    pending: Vec<Pending>,
    lets: FxHashMap<ExprId, usize>,
    boolean: Vec<bool>,
}

fn print_statements(pool: &ExprPool, roots: &[ExprId], names: &dyn RustNames) -> Printed {
    let order = rooted_order(pool, roots);
    let nodes: Vec<ExprId> = order
        .iter()
        .filter(|(_, root)| root.is_none())
        .map(|&(id, _)| id)
        .collect();
    let uses = rust_uses(pool, &nodes);
    let mut r: FxHashMap<ExprId, R> = FxHashMap::default();
    let mut lets = FxHashMap::default();
    let mut boolean = Vec::new();
    let mut pending = Vec::new();
    for &(id, root) in &order {
        if let Some(i) = root {
            let text = r.get(&id).map(|x| num_ctx(x, R_IF)).unwrap_or_default();
            pending.push(Pending {
                text: format!("out[{i}] = {text};"),
                def: None,
                top: id,
                root: Some(i),
            });
            continue;
        }
        let x = rust_node(pool, id, names, &r);
        if is_rust_let(pool, &uses, id) {
            let k = boolean.len();
            boolean.push(x.boolean);
            lets.insert(id, k);
            pending.push(Pending {
                text: x.s,
                def: Some(k),
                top: id,
                root: None,
            });
            let mut b = R::new(format!("\u{1}{k}\u{2}"), R_POSTFIX);
            b.boolean = x.boolean;
            b.bound = true;
            r.insert(id, b);
        } else {
            r.insert(id, x);
        }
    }
    Printed {
        pending,
        lets,
        boolean,
    }
}

/// [`crate::to_rust`]'s code for `roots` as statements in chunks of about
/// `max_bytes` of text each, to be compiled as separate functions: the
/// optimiser's time grows faster than linearly with the size of a
/// function, so one function of many thousand statements takes far longer
/// to compile than the same statements in chunks. Every expression is
/// printed exactly as [`crate::to_rust`] prints it (the same common
/// subexpressions, the same operand order), so the values are the same;
/// only the order of the statements differs (each root follows its
/// operands) and the common subexpressions a later chunk reads pass
/// through the arrays `sf` and `sb`. The `let`s are typed, which spares
/// rustc's type inference much of its work on large functions.
pub fn to_rust_chunked(
    pool: &ExprPool,
    roots: &[ExprId],
    names: &dyn RustNames,
    max_bytes: usize,
) -> RustChunks {
    let printed = print_statements(pool, roots, names);
    let items: Vec<Item> = (0..printed.pending.len()).map(Item::Single).collect();
    assemble(&printed, &items, &[], max_bytes, "")
}

/// A value a statement of a loop reads through a column of its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    /// `order`-th derivative of an unknown.
    Var { unknown: u32, order: u32 },
    /// A parameter.
    Param(u32),
    /// The common subexpression `k`.
    Let(usize),
    /// A constant (its bits), read from [`RustChunks::constants`].
    Const(u64),
}

/// A group of statements printed as one loop: its statements (indices of
/// [`Printed::pending`]), the first being the one whose tree is printed,
/// and the values each reads, by column.
struct Group {
    members: Vec<usize>,
    args: Vec<Vec<Arg>>,
}

/// A loop: its group, its text and the array each column of its table
/// indexes (column 0 the one it writes).
struct Loop {
    group: Group,
    text: String,
    arrays: Vec<String>,
}

/// What is printed in the order of the chunks: a statement or a loop.
enum Item {
    Single(usize),
    Loop(usize),
}

/// Whether `id` ends the tree of a statement below its top: the tree a
/// statement computes is its top node and the operations below it down to
/// the common subexpressions, leaves and constants it reads (the
/// terminals); an output whose root is itself a terminal is that terminal
/// alone.
fn is_terminal(pool: &ExprPool, lets: &FxHashMap<ExprId, usize>, id: ExprId) -> bool {
    lets.contains_key(&id) || matches!(pool.node(id), Node::Const(_) | Node::Leaf(_))
}

/// Whether a constant that is operand `k` of `node` is read from the
/// table of constants in a loop ([`RustChunks::constants`]) rather than
/// printed as a literal: where the operation is IEEE arithmetic, whose
/// result is the same for a literal and for a value loaded at run time
/// (sums, products, the divisor of a reciprocal, comparisons, the
/// branches of a selection). rustc and LLVM rewrite only exactly
/// (`x * 2.0` as `x + x`), and a sum or product of a table constant is
/// printed in the straight-line order (`R::negative`): `x - 2.0` and
/// `x + a` with `a = -2.0` are the same addition. Elsewhere the literal
/// stays part of the shape: LLVM replaces `powf(x, 2.0)` by `x * x` and
/// `powf(x, 0.5)` by `sqrt` (not bit for bit the library's `pow`), and a
/// constant condition prints as `true` or `false`.
fn constant_from_table(node: &Node, k: usize) -> bool {
    match node {
        Node::Add(_) | Node::Mul(_) | Node::Cmp(..) | Node::Powi(_, -1) => true,
        Node::Select(..) => k > 0,
        _ => false,
    }
}

/// The constants of statement `s` printed as literals in its loop: those
/// that are an operand where [`constant_from_table`] says no (or whose
/// value is not finite: their text has no sign to sort by) anywhere in
/// its tree. A constant the statement computes alone (`out[i] = 2.0;`)
/// is read from the table.
fn literal_constants(pool: &ExprPool, lets: &FxHashMap<ExprId, usize>, s: &Pending) -> Vec<ExprId> {
    let mut literal = Vec::new();
    let mut stack = vec![(s.top, s.def.is_some(), true)];
    while let Some((id, internal, from_table)) = stack.pop() {
        let node = pool.node(id);
        if internal || !is_terminal(pool, lets, id) {
            for (k, c) in node.children().enumerate() {
                stack.push((c, false, constant_from_table(&node, k)));
            }
        } else if let Node::Const(v) = node
            && (!from_table || !v.is_finite())
            && !literal.contains(&id)
        {
            literal.push(id);
        }
    }
    literal
}

/// The shape of statement `s`: its tree in pre-order with each operation
/// (and its operand count, exponent or function), each constant printed
/// as a literal ([`literal_constants`]; its bits: equal text, equal
/// value), the sign of each constant read from the table (which orders
/// the terms of a sum) and each terminal value it reads by kind and the
/// position of its first reading (the values themselves, and the
/// constants read from the table, in the returned arguments). Two
/// statements of equal shape are the same text up to the values they
/// read. `None` when a leaf has no array to be read through
/// ([`RustNames::var_array`], [`RustNames::param_array`]).
fn shape(
    pool: &ExprPool,
    printed: &Printed,
    s: &Pending,
    names: &dyn RustNames,
) -> Option<(Vec<u64>, Vec<Arg>)> {
    let mut key = vec![u64::from(s.def.is_some())];
    let mut args = Vec::new();
    let mut position: FxHashMap<ExprId, u64> = FxHashMap::default();
    let literal = literal_constants(pool, &printed.lets, s);
    let mut stack = vec![(s.top, s.def.is_some())];
    while let Some((id, internal)) = stack.pop() {
        let node = pool.node(id);
        if internal || !is_terminal(pool, &printed.lets, id) {
            key.extend(operation(&node));
            let children: Vec<ExprId> = node.children().collect();
            stack.extend(children.into_iter().rev().map(|c| (c, false)));
            continue;
        }
        let arg = match (printed.lets.get(&id), node) {
            (Some(&k), _) => {
                key.extend([1, u64::from(printed.boolean[k])]);
                Arg::Let(k)
            }
            (None, Node::Const(v)) if literal.contains(&id) => {
                key.extend([2, v.to_bits()]);
                continue;
            }
            (None, Node::Const(v)) => {
                key.extend([6, u64::from(v.is_sign_negative())]);
                Arg::Const(v.to_bits())
            }
            (None, Node::Leaf(Leaf::Time)) => {
                key.push(3);
                continue;
            }
            (None, Node::Leaf(Leaf::Param(p))) => {
                names.param_array()?;
                key.push(4);
                Arg::Param(p.0)
            }
            (None, Node::Leaf(Leaf::Var { unknown, order })) => {
                names.var_array(order)?;
                key.extend([5, u64::from(order)]);
                Arg::Var { unknown, order }
            }
            (None, _) => return None,
        };
        let next = args.len() as u64;
        let at = *position.entry(id).or_insert(next);
        if at == next {
            args.push(arg);
        }
        key.push(at);
    }
    Some((key, args))
}

/// The tokens of an operation in a shape (distinct from the terminals'
/// tags 1–6).
fn operation(node: &Node) -> [u64; 2] {
    match node {
        Node::Add(ts) => [10, ts.len() as u64],
        Node::Mul(fs) => [11, fs.len() as u64],
        Node::Powi(_, n) => [12, u64::from(n.cast_unsigned())],
        Node::Pow(..) => [13, 0],
        Node::Func(f, _) => [14, *f as u64],
        Node::Func2(f, ..) => [15, *f as u64],
        Node::Cmp(op, ..) => [16, *op as u64],
        Node::And(..) => [17, 0],
        Node::Or(..) => [18, 0],
        Node::Not(_) => [19, 0],
        Node::Select(..) => [20, 0],
        Node::Const(_) | Node::Leaf(_) => [21, 0],
        // (the Rust printers refuse a model with calls at run time)
        Node::Call(f, args) => [22, u64::from(f.raw()) << 32 | args.len() as u64],
    }
}

/// [`to_rust_chunked`]'s code with repeated structure as loops: the
/// statements of equal shape (the same tree of operations over the values
/// they read — unknowns, parameters, common subexpressions and the
/// constants of its arithmetic, their indices and values abstracted) and
/// equal level (one more than the
/// deepest common subexpression they read, so that no statement of a
/// group reads another of the group) form a group; a group of at least
/// `min_rows` statements is printed once, as the body of a loop over a
/// static table (in [`RustChunks::tables`], named `{table_prefix}{g}`)
/// that holds, per statement, where it writes and the index of each value
/// it reads; the constants that differ between its statements are read
/// from [`RustChunks::constants`] (`{table_prefix}K`), the others printed
/// as literals. A model built from arrays and `for` loops repeats its
/// equations' trees for each element, and a circuit its devices' with
/// their own constants (the two-bit adder's gates), and rustc's time
/// grows with the text it compiles: a loop compiles once what the
/// straight-line code repeats. The loops are printed only where they and the remaining
/// statements are shorter than the straight-line text (`LOOP_GAIN`),
/// and a chunk holds at most `LOOPS_PER_CHUNK` of them. The common subexpressions a loop writes or reads live in the
/// arrays `sf` and `sb`; every expression is printed as
/// [`crate::to_rust`] prints it, so the values are those of the
/// straight-line code, bit for bit. The statements are ordered by level
/// (each loop at its group's level) when loops are printed, else exactly
/// as [`to_rust_chunked`]'s.
pub fn to_rust_looped(
    pool: &ExprPool,
    roots: &[ExprId],
    names: &dyn RustNames,
    max_bytes: usize,
    min_rows: usize,
    table_prefix: &str,
) -> RustChunks {
    let printed = print_statements(pool, roots, names);
    let n = printed.pending.len();
    // the level of each statement and of each common subexpression
    let mut level = vec![0usize; n];
    let mut let_level = vec![0usize; printed.boolean.len()];
    for (i, s) in printed.pending.iter().enumerate() {
        level[i] = marks(&s.text).map(|k| let_level[k] + 1).max().unwrap_or(0);
        if let Some(k) = s.def {
            let_level[k] = level[i];
        }
    }
    let mut by_shape: FxHashMap<(usize, Vec<u64>), usize> = FxHashMap::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of = vec![None; n];
    for (i, s) in printed.pending.iter().enumerate() {
        let Some((key, args)) = shape(pool, &printed, s, names) else {
            continue;
        };
        let g = *by_shape.entry((level[i], key)).or_insert_with(|| {
            groups.push(Group {
                members: Vec::new(),
                args: Vec::new(),
            });
            groups.len() - 1
        });
        groups[g].members.push(i);
        groups[g].args.push(args);
        group_of[i] = Some(g);
    }
    // the groups printed as loops, renumbered in order
    let mut looped: Vec<Group> = Vec::new();
    let mut loop_of = vec![None; groups.len()];
    for (g, group) in groups.into_iter().enumerate() {
        if group.members.len() >= min_rows.max(2) {
            loop_of[g] = Some(looped.len());
            looped.push(group);
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (level[i], i));
    let mut items = Vec::new();
    for i in order {
        match group_of[i].and_then(|g| loop_of[g]) {
            Some(l) if looped[l].members[0] == i => items.push(Item::Loop(l)),
            Some(_) => {}
            None => items.push(Item::Single(i)),
        }
    }
    let loops: Vec<Loop> = looped
        .into_iter()
        .enumerate()
        .map(|(l, mut group)| {
            let table = format!("{table_prefix}{l}");
            let constants = format!("{table_prefix}K");
            let uniform = uniform_constants(&mut group);
            let tables = (table.as_str(), constants.as_str());
            let (text, arrays) = loop_text(pool, &printed, (&group, &uniform), names, tables);
            Loop {
                group,
                text,
                arrays,
            }
        })
        .collect();
    // the loops pay only where they replace most of the text
    let straight: usize = printed.pending.iter().map(|s| s.text.len()).sum();
    let text: usize = items
        .iter()
        .map(|item| match *item {
            Item::Single(i) => printed.pending[i].text.len(),
            Item::Loop(l) => loops[l].text.len(),
        })
        .sum();
    if loops.is_empty() || text.saturating_mul(LOOP_GAIN) > straight {
        let items: Vec<Item> = (0..n).map(Item::Single).collect();
        return assemble(&printed, &items, &[], max_bytes, table_prefix);
    }
    assemble(&printed, &items, &loops, max_bytes, table_prefix)
}

/// How many times shorter than the straight-line statements the text of
/// the loops and the remaining statements must be for
/// [`to_rust_looped`] to print loops: any saving pays once a chunk holds
/// at most [`LOOPS_PER_CHUNK`] loops. Per byte, a loop and the statements
/// that read its values through `sf` cost rustc more than straight-line
/// code, and with many loops in one function LLVM's loop passes grow
/// faster than linearly; bounded per chunk, the two-bit adder's library
/// (whose residual's loops leave three quarters of its straight-line
/// text) builds in 0.74 of the CPU time of the same loops at most 3×
/// shorter and unbounded per chunk.
const LOOP_GAIN: usize = 1;

/// The most loops [`to_rust_looped`] puts in one chunk (a chunk with
/// more ends before the next loop, whatever its size). LLVM's loop
/// passes (full unrolling over the constant tables, induction variables,
/// instruction combining) take more than linear time in the loops of a
/// function: the two-bit adder's Jacobian, 67 loops in one function of
/// 55 KB, took 0.59 s of CPU to build, against 0.45 s in chunks of 16 KiB;
/// chunks of 8 loops keep the straight-line chunks (and their reads of
/// `sf`) as large as [`to_rust_looped`]'s `max_bytes`.
const LOOPS_PER_CHUNK: usize = 8;

/// The constants that every statement of `group` reads in the same
/// column (`0.0` in `if x <= 0.0`), removed from its arguments: the loop
/// prints them as literals, as the straight-line statements do.
fn uniform_constants(group: &mut Group) -> Vec<u64> {
    let Some(first) = group.args.first() else {
        return Vec::new();
    };
    let uniform: Vec<bool> = first
        .iter()
        .enumerate()
        .map(|(c, a)| matches!(a, Arg::Const(_)) && group.args.iter().all(|row| row[c] == *a))
        .collect();
    let bits = first
        .iter()
        .zip(&uniform)
        .filter_map(|(a, &u)| match *a {
            Arg::Const(b) if u => Some(b),
            _ => None,
        })
        .collect();
    for row in &mut group.args {
        let mut c = 0;
        row.retain(|_| {
            c += 1;
            !uniform[c - 1]
        });
    }
    bits
}

/// The loop of `group` over `table`: its first statement's tree printed
/// with the values it reads bound to `a0`, `a1`, … from the columns 1, 2,
/// … of the table's row `r` (in the order of the group's arguments; a
/// constant read from the table from the array `constants`, the others —
/// [`literal_constants`] and those of `uniform` — printed as literals),
/// ending with the store of its value where column
/// 0 says; and the array of each column. The arrays are indexed without bounds checks: a
/// bounds check per value read is a branch out of the loop, and LLVM's
/// loop passes (induction variables, loop deletion) take time in the
/// number of a loop's exits — with them, Fekete's library took 1.6 s of
/// CPU to build instead of 0.9 s. [`RustChunks::loop_reach`] says how
/// long the arrays must be.
fn loop_text(
    pool: &ExprPool,
    printed: &Printed,
    (group, uniform): (&Group, &[u64]),
    names: &dyn RustNames,
    (table, constants): (&str, &str),
) -> (String, Vec<String>) {
    let s = &printed.pending[group.members[0]];
    let args = group.args.first().map_or(&[][..], Vec::as_slice);
    let literal = literal_constants(pool, &printed.lets, s);
    let mut r: FxHashMap<ExprId, R> = FxHashMap::default();
    let mut bindings = vec![String::new(); args.len()];
    let mut arrays = vec![String::new(); args.len() + 1];
    // post-order over the tree: the terminals get their names, each
    // operation is printed over its operands'
    let mut stack = vec![(s.top, s.def.is_some(), false)];
    while let Some((id, internal, done)) = stack.pop() {
        if r.contains_key(&id) {
            continue;
        }
        if internal || !is_terminal(pool, &printed.lets, id) {
            if done {
                let x = rust_node(pool, id, names, &r);
                r.insert(id, x);
            } else {
                stack.push((id, internal, true));
                let children: Vec<ExprId> = pool.node(id).children().collect();
                stack.extend(children.into_iter().rev().map(|c| (c, false, false)));
            }
            continue;
        }
        let (arg, array, boolean) = match (printed.lets.get(&id), pool.node(id)) {
            (Some(&k), _) => {
                let b = printed.boolean[k];
                (Arg::Let(k), if b { "sb" } else { "sf" }.to_string(), b)
            }
            (None, Node::Leaf(Leaf::Param(p))) => (
                Arg::Param(p.0),
                names.param_array().unwrap_or_default(),
                false,
            ),
            (None, Node::Leaf(Leaf::Var { unknown, order })) => (
                Arg::Var { unknown, order },
                names.var_array(order).unwrap_or_default(),
                false,
            ),
            (None, Node::Const(v)) if !literal.contains(&id) && !uniform.contains(&v.to_bits()) => {
                (Arg::Const(v.to_bits()), constants.to_string(), false)
            }
            _ => {
                let x = rust_node(pool, id, names, &r);
                r.insert(id, x);
                continue;
            }
        };
        let column = args.iter().position(|&a| a == arg).unwrap_or(0);
        let ty = if boolean { "bool" } else { "f64" };
        bindings[column] = format!(
            "            let a{column}: {ty} = *{array}.get_unchecked(r[{}] as usize);\n",
            column + 1
        );
        arrays[column + 1] = array;
        let mut x = R::new(format!("a{column}"), R_POSTFIX);
        x.boolean = boolean;
        x.bound = matches!(arg, Arg::Let(_) | Arg::Const(_));
        x.negative = matches!(arg, Arg::Const(b) if f64::from_bits(b).is_sign_negative());
        r.insert(id, x);
    }
    let value = r.get(&s.top);
    let (target, value) = match s.def {
        Some(k) => (
            if printed.boolean[k] { "sb" } else { "sf" },
            value.map(|x| x.s.clone()),
        ),
        None => ("out", value.map(|x| num_ctx(x, R_IF))),
    };
    arrays[0] = target.to_string();
    let text = format!(
        "for r in {table}.iter() {{\n        unsafe {{\n{}            *{target}.get_unchecked_mut(r[0] as usize) = {};\n        }}\n    }}",
        bindings.concat(),
        value.unwrap_or_default()
    );
    (text, arrays)
}

/// The distinct constants the loops read ([`RustChunks::constants`]), in
/// the order the tables first name them.
#[derive(Default)]
struct Constants {
    index: FxHashMap<u64, usize>,
    bits: Vec<u64>,
}

impl Constants {
    /// The index of the constant of `bits`, given on first request.
    fn index(&mut self, bits: u64) -> usize {
        *self.index.entry(bits).or_insert_with(|| {
            self.bits.push(bits);
            self.bits.len() - 1
        })
    }

    /// The static `name` of the constants (empty when there are none).
    fn text(&self, name: &str) -> String {
        if self.bits.is_empty() {
            return String::new();
        }
        let bytes: Vec<u8> = self.bits.iter().flat_map(|b| b.to_ne_bytes()).collect();
        format!(
            "static {name}: [f64; {}] = unsafe {{ core::mem::transmute(*b\"{}\") }};",
            self.bits.len(),
            byte_string(&bytes)
        )
    }
}

/// Hands out the slots of `sf` and `sb`.
struct Slots {
    slot: Vec<Option<usize>>,
    counts: [usize; 2],
}

impl Slots {
    /// The slot of common subexpression `k` (of type `bool` if `boolean`),
    /// given on first request.
    fn take(&mut self, k: usize, boolean: bool) {
        if self.slot[k].is_none() {
            let n = &mut self.counts[usize::from(boolean)];
            self.slot[k] = Some(*n);
            *n += 1;
        }
    }
}

/// The table of loop `l` as a static: per statement of its group, where
/// it writes (its common subexpression's slot or its output) and the index
/// of each value it reads; `u16` entries when they fit. The entries are a
/// byte string in the byte order of the machine that generates the text
/// (transmuted to the array), which is the order of the library `rustc`
/// builds there for it. A constant's entry is its index in `constants`
/// (the array named `constants.0`). Raises the length each array but the
/// constants needs in `reach`.
fn table_text(
    name: &str,
    l: &Loop,
    (pending, slot): (&[Pending], &[Option<usize>]),
    constants: (&str, &mut Constants),
    reach: &mut BTreeMap<String, usize>,
) -> String {
    let group = &l.group;
    let rows: Vec<Vec<usize>> = group
        .members
        .iter()
        .zip(&group.args)
        .map(|(&m, args)| {
            let s = &pending[m];
            let target = match s.def {
                Some(k) => slot[k].unwrap_or(0),
                None => s.root.unwrap_or(0),
            };
            let values = args.iter().map(|a| match *a {
                Arg::Var { unknown, .. } => unknown as usize,
                Arg::Param(p) => p as usize,
                Arg::Let(k) => slot[k].unwrap_or(0),
                Arg::Const(bits) => constants.1.index(bits),
            });
            std::iter::once(target).chain(values).collect()
        })
        .collect();
    for row in &rows {
        for (v, array) in row.iter().zip(&l.arrays) {
            if array == constants.0 {
                continue;
            }
            let need = reach.entry(array.clone()).or_insert(0);
            *need = (*need).max(v + 1);
        }
    }
    let wide = rows.iter().flatten().any(|&v| v > usize::from(u16::MAX));
    let columns = rows.first().map_or(1, Vec::len);
    let mut bytes = Vec::new();
    for &v in rows.iter().flatten() {
        // (the values are below 2^32: indices into arrays of the generator)
        if wide {
            bytes.extend_from_slice(&(v as u32).to_ne_bytes());
        } else {
            bytes.extend_from_slice(&(v as u16).to_ne_bytes());
        }
    }
    let ty = if wide { "u32" } else { "u16" };
    format!(
        "static {name}: [[{ty}; {columns}]; {}] = unsafe {{ core::mem::transmute(*b\"{}\") }};",
        rows.len(),
        byte_string(&bytes)
    )
}

/// The text of a byte string literal of `bytes` (without the quotes):
/// printable ASCII as itself, everything else escaped. A table is one
/// literal token instead of a number per entry, each of which rustc would
/// type-check: Fekete's 0.5 MB of tables took a fifth of its library's
/// build.
fn byte_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// The chunks of `items`: statements (their common subexpressions named)
/// and loops (`loops`: each group and its text, its table named
/// `{table_prefix}{l}`), in chunks of at least one item, about
/// `max_bytes` and at most [`LOOPS_PER_CHUNK`] loops; a common subexpression gets a slot of `sf`/`sb` when a
/// loop writes or reads it or a later chunk reads it.
fn assemble(
    printed: &Printed,
    items: &[Item],
    loops: &[Loop],
    max_bytes: usize,
    table_prefix: &str,
) -> RustChunks {
    let (pending, boolean) = (&printed.pending, &printed.boolean);
    let mut chunk_of = Vec::with_capacity(items.len());
    let (mut chunk, mut bytes, mut in_chunk) = (0usize, 0usize, 0usize);
    for item in items {
        let (len, is_loop) = match *item {
            Item::Single(i) => (pending[i].text.len(), false),
            Item::Loop(l) => (loops[l].text.len(), true),
        };
        let full = bytes + len > max_bytes || (is_loop && in_chunk >= LOOPS_PER_CHUNK);
        if bytes > 0 && full {
            chunk += 1;
            bytes = 0;
            in_chunk = 0;
        }
        bytes += len;
        in_chunk += usize::from(is_loop);
        chunk_of.push(chunk);
    }
    // where each common subexpression is computed, and whether by a loop
    let mut def_chunk = vec![0; boolean.len()];
    let mut looped = vec![false; boolean.len()];
    for (item, &c) in items.iter().zip(&chunk_of) {
        let (members, by_loop) = match item {
            Item::Single(i) => (std::slice::from_ref(i), false),
            Item::Loop(l) => (loops[*l].group.members.as_slice(), true),
        };
        for k in members.iter().filter_map(|&m| pending[m].def) {
            def_chunk[k] = c;
            looped[k] = by_loop;
        }
    }
    let mut slots = Slots {
        slot: vec![None; boolean.len()],
        counts: [0, 0],
    };
    for (item, &c) in items.iter().zip(&chunk_of) {
        match *item {
            Item::Single(i) => {
                for k in marks(&pending[i].text) {
                    if looped[k] || def_chunk[k] != c {
                        slots.take(k, boolean[k]);
                    }
                }
            }
            Item::Loop(l) => {
                let group = &loops[l].group;
                let defs = group.members.iter().filter_map(|&m| pending[m].def);
                let reads = group.args.iter().flatten().filter_map(|a| match *a {
                    Arg::Let(k) => Some(k),
                    _ => None,
                });
                for k in defs.chain(reads) {
                    slots.take(k, boolean[k]);
                }
            }
        }
    }
    let slot = &slots.slot;
    let mut out = RustChunks {
        chunks: vec![Vec::new(); chunk + 1],
        scratch_f64: slots.counts[0],
        scratch_bool: slots.counts[1],
        ..RustChunks::default()
    };
    let array = |k: usize| if boolean[k] { "sb" } else { "sf" };
    let mut reach = BTreeMap::new();
    let constants_name = format!("{table_prefix}K");
    let mut constants = Constants::default();
    for (item, &c) in items.iter().zip(&chunk_of) {
        let i = match *item {
            Item::Single(i) => i,
            Item::Loop(l) => {
                let lp = &loops[l];
                out.chunks[c].push(lp.text.clone());
                let name = format!("{table_prefix}{l}");
                out.tables.push(table_text(
                    &name,
                    lp,
                    (pending, slot),
                    (&constants_name, &mut constants),
                    &mut reach,
                ));
                out.loop_rows.push(lp.group.members.len());
                continue;
            }
        };
        let s = &pending[i];
        let text = unmark(&s.text, |k| match slot[k] {
            Some(j) if looped[k] || def_chunk[k] != c => format!("{}[{j}]", array(k)),
            _ => format!("s{k}"),
        });
        out.chunks[c].push(match s.def {
            Some(k) => {
                let ty = if boolean[k] { "bool" } else { "f64" };
                match slot[k] {
                    Some(j) => format!("let s{k}: {ty} = {text}; {}[{j}] = s{k};", array(k)),
                    None => format!("let s{k}: {ty} = {text};"),
                }
            }
            None => text,
        });
    }
    out.loop_reach = reach.into_iter().collect();
    out.constants = constants.text(&constants_name);
    out
}

/// The common subexpressions `\u{1}K\u{2}` that `text` reads.
fn marks(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.split('\u{1}')
        .skip(1)
        .filter_map(|m| m.split_once('\u{2}')?.0.parse().ok())
}

/// `text` with every mark `\u{1}K\u{2}` replaced by `name(K)`.
fn unmark(text: &str, name: impl Fn(usize) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut parts = text.split('\u{1}');
    out.push_str(parts.next().unwrap_or_default());
    for m in parts {
        match m.split_once('\u{2}') {
            Some((k, rest)) => {
                out.push_str(&k.parse().map(&name).unwrap_or_default());
                out.push_str(rest);
            }
            None => out.push_str(m),
        }
    }
    out
}

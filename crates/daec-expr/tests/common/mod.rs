//! Shared test helpers: an environment, name tables, and a tiny `.dae`
//! expression parser used to check that the Modelica printer re-reads to the
//! same expression id.
#![allow(dead_code)]

use daec_expr::{CmpOp, Env, ExprId, ExprPool, Func, Func2, Names, ParamId, RustNames};

/// Leaf values: `vars[j][k]` is z_j^(k).
#[derive(Clone, Debug)]
pub struct TestEnv {
    pub vars: Vec<Vec<f64>>,
    pub params: Vec<f64>,
    pub t: f64,
}

impl Env for TestEnv {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        self.vars
            .get(unknown as usize)
            .and_then(|v| v.get(order as usize))
            .copied()
            .unwrap_or(f64::NAN)
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// Names from fixed tables.
pub struct TestNames {
    pub unknowns: Vec<&'static str>,
    pub params: Vec<&'static str>,
}

impl Names for TestNames {
    fn unknown(&self, j: u32) -> String {
        self.unknowns
            .get(j as usize)
            .map_or_else(|| format!("z{j}"), |s| s.to_string())
    }
    fn param(&self, p: ParamId) -> String {
        self.params
            .get(p.0 as usize)
            .map_or_else(|| format!("p{}", p.0), |s| s.to_string())
    }
}

/// Rust names `z[j]`, `zp[j]`, `zpp[j]`, `p[k]`.
pub struct VecNames;

impl RustNames for VecNames {
    fn var(&self, unknown: u32, order: u32) -> String {
        format!("z{}[{unknown}]", "p".repeat(order as usize))
    }
    fn param(&self, p: ParamId) -> String {
        format!("p[{}]", p.0)
    }
    fn var_array(&self, order: u32) -> Option<String> {
        Some(format!("z{}", "p".repeat(order as usize)))
    }
    fn param_array(&self) -> Option<String> {
        Some("p".into())
    }
}

pub fn names() -> TestNames {
    TestNames {
        unknowns: vec!["x", "y", "v", "w", "lambda"],
        params: vec!["m", "g", "l"],
    }
}

/// A minimal precedence-climbing parser for the `.dae` expression subset
/// that [`daec_expr::to_modelica`] prints (numbers, names from
/// [`TestNames`], `der`, `time`, `+ - * / ^`, comparisons, `and or not`,
/// `if then else`, the functions, `true`/`false`). Test-only: it recurses.
pub struct Parser<'a> {
    toks: Vec<String>,
    pos: usize,
    names: &'a TestNames,
}

fn tokenize(s: &str) -> Vec<String> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let st = i;
            while i < cs.len() && (cs[i].is_ascii_digit() || cs[i] == '.') {
                i += 1;
            }
            if i < cs.len() && (cs[i] == 'e' || cs[i] == 'E') {
                i += 1;
                if i < cs.len() && (cs[i] == '+' || cs[i] == '-') {
                    i += 1;
                }
                while i < cs.len() && cs[i].is_ascii_digit() {
                    i += 1;
                }
            }
            out.push(cs[st..i].iter().collect());
        } else if c.is_alphabetic() || c == '_' {
            let st = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            out.push(cs[st..i].iter().collect());
        } else {
            let two: String = cs[i..(i + 2).min(cs.len())].iter().collect();
            if ["<=", ">=", "==", "<>"].contains(&two.as_str()) {
                out.push(two);
                i += 2;
            } else {
                out.push(c.to_string());
                i += 1;
            }
        }
    }
    out
}

impl<'a> Parser<'a> {
    pub fn parse(pool: &mut ExprPool, s: &str, names: &'a TestNames) -> Result<ExprId, String> {
        let mut p = Parser {
            toks: tokenize(s),
            pos: 0,
            names,
        };
        let e = p.expr(pool)?;
        if p.pos != p.toks.len() {
            return Err(format!(
                "trailing tokens at {}: {:?}",
                p.pos,
                &p.toks[p.pos..]
            ));
        }
        Ok(e)
    }

    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(|s| s.as_str())
    }

    fn eat(&mut self, t: &str) -> Result<(), String> {
        if self.peek() == Some(t) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!(
                "expected {t} at {} got {:?}",
                self.pos,
                self.peek()
            ))
        }
    }

    fn expr(&mut self, pool: &mut ExprPool) -> Result<ExprId, String> {
        if self.peek() == Some("if") {
            self.pos += 1;
            let c = self.expr(pool)?;
            self.eat("then")?;
            let a = self.expr(pool)?;
            self.eat("else")?;
            let b = self.expr(pool)?;
            return Ok(pool.select(c, a, b));
        }
        self.or(pool)
    }

    fn or(&mut self, pool: &mut ExprPool) -> Result<ExprId, String> {
        let mut a = self.and(pool)?;
        while self.peek() == Some("or") {
            self.pos += 1;
            let b = self.and(pool)?;
            a = pool.or(a, b);
        }
        Ok(a)
    }

    fn and(&mut self, pool: &mut ExprPool) -> Result<ExprId, String> {
        let mut a = self.not(pool)?;
        while self.peek() == Some("and") {
            self.pos += 1;
            let b = self.not(pool)?;
            a = pool.and(a, b);
        }
        Ok(a)
    }

    fn not(&mut self, pool: &mut ExprPool) -> Result<ExprId, String> {
        if self.peek() == Some("not") {
            self.pos += 1;
            let a = self.rel(pool)?;
            return Ok(pool.not(a));
        }
        self.rel(pool)
    }

    fn rel(&mut self, pool: &mut ExprPool) -> Result<ExprId, String> {
        let a = self.arith(pool)?;
        let op = match self.peek() {
            Some("<") => CmpOp::Lt,
            Some("<=") => CmpOp::Le,
            Some(">") => CmpOp::Gt,
            Some(">=") => CmpOp::Ge,
            Some("==") => CmpOp::Eq,
            Some("<>") => CmpOp::Ne,
            _ => return Ok(a),
        };
        self.pos += 1;
        let b = self.arith(pool)?;
        Ok(pool.cmp(op, a, b))
    }

    fn arith(&mut self, pool: &mut ExprPool) -> Result<ExprId, String> {
        let mut a = if self.peek() == Some("-") {
            self.pos += 1;
            let t = self.term(pool)?;
            pool.neg(t)
        } else {
            if self.peek() == Some("+") {
                self.pos += 1;
            }
            self.term(pool)?
        };
        loop {
            match self.peek() {
                Some("+") => {
                    self.pos += 1;
                    let b = self.term(pool)?;
                    a = pool.add(a, b);
                }
                Some("-") => {
                    self.pos += 1;
                    let b = self.term(pool)?;
                    a = pool.sub(a, b);
                }
                _ => return Ok(a),
            }
        }
    }

    fn term(&mut self, pool: &mut ExprPool) -> Result<ExprId, String> {
        let mut a = self.factor(pool)?;
        loop {
            match self.peek() {
                Some("*") => {
                    self.pos += 1;
                    let b = self.factor(pool)?;
                    a = pool.mul(a, b);
                }
                Some("/") => {
                    self.pos += 1;
                    let b = self.factor(pool)?;
                    a = pool.div(a, b);
                }
                _ => return Ok(a),
            }
        }
    }

    fn factor(&mut self, pool: &mut ExprPool) -> Result<ExprId, String> {
        let a = self.primary(pool)?;
        if self.peek() == Some("^") {
            self.pos += 1;
            let b = self.primary(pool)?;
            return Ok(pool.pow(a, b));
        }
        Ok(a)
    }

    fn primary(&mut self, pool: &mut ExprPool) -> Result<ExprId, String> {
        let t = self.peek().ok_or("unexpected end")?.to_string();
        self.pos += 1;
        if t == "(" {
            let e = self.expr(pool)?;
            self.eat(")")?;
            return Ok(e);
        }
        if t.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            let v: f64 = t.parse().map_err(|e| format!("{t}: {e}"))?;
            return Ok(pool.constant(v));
        }
        match t.as_str() {
            "time" => return Ok(pool.time()),
            "true" => return Ok(pool.constant(1.0)),
            "false" => return Ok(pool.constant(0.0)),
            "der" => {
                self.eat("(")?;
                let e = self.expr(pool)?;
                self.eat(")")?;
                return Ok(pool.dt(e));
            }
            _ => {}
        }
        if let Some(f) = Func::from_name(&t) {
            self.eat("(")?;
            let a = self.expr(pool)?;
            self.eat(")")?;
            return Ok(pool.func(f, a));
        }
        if let Some(f) = Func2::from_name(&t) {
            self.eat("(")?;
            let a = self.expr(pool)?;
            self.eat(",")?;
            let b = self.expr(pool)?;
            self.eat(")")?;
            return Ok(pool.func2(f, a, b));
        }
        if let Some(j) = self.names.unknowns.iter().position(|n| *n == t) {
            return Ok(pool.var(j as u32, 0));
        }
        if let Some(k) = self.names.params.iter().position(|n| *n == t) {
            return Ok(pool.param(ParamId(k as u32)));
        }
        if let Some(j) = t.strip_prefix('z').and_then(|r| r.parse::<u32>().ok()) {
            return Ok(pool.var(j, 0));
        }
        if let Some(k) = t.strip_prefix('p').and_then(|r| r.parse::<u32>().ok()) {
            return Ok(pool.param(ParamId(k)));
        }
        Err(format!("unknown name {t}"))
    }
}

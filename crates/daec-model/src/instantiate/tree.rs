//! The class tree of the parsed `.mo` files and the lookup of class names
//! (MLS 3.6, §5.3: a name is looked up in the enclosing classes from the
//! inside out, then through the `import` clauses of each).

use daec_syntax::ast::{ClassBody, ClassDef, ClassKind, Element, ImportKind, StoredDefinition};

/// One class of the tree; node 0 is the unnamed root (the top level).
pub(super) struct Node<'a> {
    /// The name in its enclosing class.
    pub name: String,
    /// The definition (`None` for the root and for a package that a
    /// `within` clause names but no file defines).
    pub def: Option<&'a ClassDef>,
    /// The enclosing class.
    pub parent: Option<usize>,
    /// The nested classes, by name, in source order.
    pub children: Vec<(String, usize)>,
}

/// Every class of the parsed files, nested as defined.
pub(super) struct ClassTree<'a> {
    pub nodes: Vec<Node<'a>>,
}

/// The most steps a class lookup takes (imports that import each other
/// cannot loop).
const MAX_LOOKUP_STEPS: usize = 64;

impl<'a> ClassTree<'a> {
    /// The tree of the classes of `files`, each placed under its `within`
    /// package.
    pub fn new(files: &'a [StoredDefinition]) -> ClassTree<'a> {
        let mut tree = ClassTree {
            nodes: vec![Node {
                name: String::new(),
                def: None,
                parent: None,
                children: Vec::new(),
            }],
        };
        for file in files {
            let mut at = 0;
            for part in file.within.iter().flatten() {
                at = match tree.child(at, &part.name) {
                    Some(c) => c,
                    None => tree.add(at, &part.name, None),
                };
            }
            for class in &file.classes {
                tree.add_class(at, class);
            }
        }
        tree
    }

    fn add(&mut self, parent: usize, name: &str, def: Option<&'a ClassDef>) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node {
            name: name.to_owned(),
            def,
            parent: Some(parent),
            children: Vec::new(),
        });
        self.nodes[parent].children.push((name.to_owned(), id));
        id
    }

    fn add_class(&mut self, parent: usize, class: &'a ClassDef) {
        // A class first named by a `within` clause gets its definition.
        let id = match self.child(parent, &class.name.name) {
            Some(c) if self.nodes[c].def.is_none() => {
                self.nodes[c].def = Some(class);
                c
            }
            _ => self.add(parent, &class.name.name, Some(class)),
        };
        if let ClassBody::Long { elements, .. } = &class.body {
            for e in elements {
                if let Element::Class(c) = e {
                    self.add_class(id, c);
                }
            }
        }
    }

    /// The full dotted name of `class` (`P.Resistor`), built on demand
    /// (deeply nested packages would make stored names quadratic).
    pub fn full(&self, class: usize) -> String {
        let mut parts = Vec::new();
        let mut at = Some(class);
        while let Some(k) = at.filter(|&k| k != 0) {
            parts.push(self.nodes[k].name.as_str());
            at = self.nodes[k].parent;
        }
        parts.reverse();
        parts.join(".")
    }

    /// The nested class `name` of `class`.
    pub fn child(&self, class: usize, name: &str) -> Option<usize> {
        self.nodes[class]
            .children
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, c)| c)
    }

    /// The kind of `class` (`package` for a node without definition).
    pub fn kind(&self, class: usize) -> ClassKind {
        self.nodes[class].def.map_or(ClassKind::Package, |d| d.kind)
    }

    /// Looks `parts` up from inside `class` (MLS 3.6, §5.3.1): the first
    /// part in `class` and its enclosing classes (their nested classes and
    /// imports), the rest as nested classes of what it found.
    pub fn lookup(&self, class: usize, parts: &[String]) -> Option<usize> {
        self.lookup_steps(class, parts, MAX_LOOKUP_STEPS)
    }

    fn lookup_steps(&self, class: usize, parts: &[String], steps: usize) -> Option<usize> {
        let (first, rest) = parts.split_first()?;
        let steps = steps.checked_sub(1)?;
        let mut scope = Some(class);
        let mut found = None;
        while let Some(s) = scope {
            if let Some(c) = self.child(s, first) {
                found = Some(c);
                break;
            }
            if self.nodes[s].name == *first && s != 0 && self.nodes[s].parent == Some(0) {
                found = Some(s);
                break;
            }
            if let Some(c) = self.imported(s, first, steps) {
                found = Some(c);
                break;
            }
            scope = self.nodes[s].parent;
        }
        let mut at = found?;
        for p in rest {
            at = self.child(at, p)?;
        }
        Some(at)
    }

    /// The class that an `import` clause of `class` names `name`.
    fn imported(&self, class: usize, name: &str, steps: usize) -> Option<usize> {
        let def = self.nodes[class].def?;
        let ClassBody::Long { elements, .. } = &def.body else {
            return None;
        };
        // Imported names are looked up from the top level (MLS 3.6,
        // §13.2.1: the name in an import clause is fully qualified).
        for e in elements {
            let Element::Import(import) = e else { continue };
            match &import.kind {
                ImportKind::Qualified(path) if path.parts.last().is_some_and(|l| l == name) => {
                    return self.lookup_steps(0, &path.parts, steps);
                }
                ImportKind::Renamed(alias, path) if alias.name == name => {
                    return self.lookup_steps(0, &path.parts, steps);
                }
                ImportKind::Unqualified(path) => {
                    if let Some(c) = self
                        .lookup_steps(0, &path.parts, steps)
                        .and_then(|p| self.child(p, name))
                    {
                        return Some(c);
                    }
                }
                ImportKind::Multiple(path, names) if names.iter().any(|n| n.name == name) => {
                    return self
                        .lookup_steps(0, &path.parts, steps)
                        .and_then(|p| self.child(p, name));
                }
                _ => {}
            }
        }
        None
    }

    /// The places an `import` clause of `class` may bring the element
    /// `name` from, in clause order: the class that would hold it and its
    /// name there (MLS 3.6, §13.2.1: an import names any element, a
    /// constant of a package too — `import Modelica.Constants.pi;`,
    /// `import C = Modelica.Constants;` is a class and found by
    /// [`ClassTree::lookup`]).
    pub fn imported_elements(&self, class: usize, name: &str) -> Vec<(usize, String)> {
        let Some(ClassBody::Long { elements, .. }) = self.nodes[class].def.map(|d| &d.body) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut push = |path: &[String], element: &str| {
            if let Some(c) = self.lookup(0, path) {
                out.push((c, element.to_owned()));
            }
        };
        for e in elements {
            let Element::Import(import) = e else { continue };
            match &import.kind {
                ImportKind::Qualified(path) if path.parts.last().is_some_and(|l| l == name) => {
                    push(&path.parts[..path.parts.len() - 1], name);
                }
                ImportKind::Renamed(alias, path) if alias.name == name => {
                    if let Some((last, package)) = path.parts.split_last() {
                        push(package, last);
                    }
                }
                ImportKind::Unqualified(path) => push(&path.parts, name),
                ImportKind::Multiple(path, names) if names.iter().any(|n| n.name == name) => {
                    push(&path.parts, name);
                }
                _ => {}
            }
        }
        out
    }

    /// The models of [`ClassTree::models`] that no class uses as the type
    /// of a component or as a base class (by last name part): the
    /// candidates for the model a file is written for.
    pub fn roots(&self) -> Vec<String> {
        let mut used: Vec<&str> = Vec::new();
        for def in self.nodes.iter().filter_map(|n| n.def) {
            match &def.body {
                ClassBody::Long { elements, .. } => {
                    for e in elements {
                        let name = match e {
                            Element::Component(c) => &c.decl.type_name,
                            Element::Extends(x) => &x.base,
                            _ => continue,
                        };
                        used.extend(name.parts.last().map(String::as_str));
                    }
                }
                ClassBody::Short { base, .. } => used.extend(base.parts.last().map(String::as_str)),
            }
        }
        self.models()
            .into_iter()
            .filter(|m| !used.contains(&m.rsplit('.').next().unwrap_or(m)))
            .collect()
    }

    /// The classes that can be simulated: every non-`partial` `model`,
    /// `block` or `class`, by full name, in source order.
    pub fn models(&self) -> Vec<String> {
        (0..self.nodes.len())
            .filter(|&k| {
                self.nodes[k].def.is_some_and(|d| {
                    !d.partial
                        && matches!(
                            d.kind,
                            ClassKind::Model | ClassKind::Block | ClassKind::Class
                        )
                })
            })
            .map(|k| self.full(k))
            .collect()
    }
}

//! Moving a model part's byte ranges, for a kernel reused from an earlier version of the text
//! whose statement now starts elsewhere.
//!
//! Every impl destructures its type completely, so a new field with a range fails to compile here
//! instead of being left behind.

use super::types::{Autotune, Binding, Config, Heuristics, Kernel, Launch, Param, TlOp, TlOpKind};
use crate::text::TextRange;

pub trait MapRanges {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange));
}

impl MapRanges for TextRange {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        f(self)
    }
}

impl<T: MapRanges> MapRanges for Option<T> {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        if let Some(x) = self {
            x.map_ranges(f)
        }
    }
}

impl<T: MapRanges> MapRanges for Vec<T> {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        for x in self {
            x.map_ranges(f)
        }
    }
}

impl MapRanges for Binding {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        let Binding { name: _, value: _, range, site, key_range } = self;
        f(range);
        f(site);
        f(key_range);
    }
}

impl MapRanges for Param {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        let Param { name: _, range, is_constexpr: _, annotation: _, annotation_range, default } = self;
        f(range);
        annotation_range.map_ranges(f);
        default.map_ranges(f);
    }
}

impl MapRanges for Config {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        let Config { range, kwargs, options, kwargs_range, opaque: _, instance: _ } = self;
        f(range);
        kwargs.map_ranges(f);
        options.map_ranges(f);
        kwargs_range.map_ranges(f);
    }
}

impl MapRanges for Autotune {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        let Autotune {
            range,
            configs,
            configs_complete: _,
            configs_range,
            key: _,
            has_prune_configs_by: _,
            other_kwargs: _,
            opaque_kwargs: _,
            functional: _,
        } = self;
        f(range);
        configs.map_ranges(f);
        configs_range.map_ranges(f);
    }
}

impl MapRanges for Launch {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        let Launch {
            range,
            target_range,
            kernel: _,
            grid_range,
            grid: _, // expressions only
            positional: _,
            kwargs,
            opaque_kwargs: _,
            grid_uses_device_count: _,
            positional_args,
            via_fn: _,
            via_tuner: _,
            warmup: _,
        } = self;
        f(range);
        f(target_range);
        f(grid_range);
        kwargs.map_ranges(f);
        positional_args.map_ranges(f);
    }
}

impl MapRanges for Heuristics {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        let Heuristics { range, names: _ } = self;
        f(range);
    }
}

impl MapRanges for TlOp {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        let TlOp { kind, range, callee_range, callee: _ } = self;
        f(range);
        f(callee_range);
        match kind {
            TlOpKind::Dot {
                a_shape: _,
                b_shape: _,
                a_dtype: _,
                b_dtype: _,
                input_precision,
                allow_tf32,
                has_acc_arg: _,
                inplace_accumulate,
                acc_dtype: _,
            } => {
                input_precision.map_ranges(f);
                allow_tf32.map_ranges(f);
                inplace_accumulate.map_ranges(f);
            }
            TlOpKind::BoundaryCheck { value } => value.map_ranges(f),
            TlOpKind::Call { keywords } => {
                for (_, r) in keywords {
                    f(r);
                }
            }
            // No ranges inside (expressions and names only).
            TlOpKind::Arange { .. }
            | TlOpKind::Zeros { .. }
            | TlOpKind::MakeBlockPtr
            | TlOpKind::Advance
            | TlOpKind::MakeTensorDescriptor { .. }
            | TlOpKind::Float64
            | TlOpKind::Int32Offset { .. }
            | TlOpKind::Reduce { .. }
            | TlOpKind::Math { .. }
            | TlOpKind::ProgramId { .. }
            | TlOpKind::Memory { .. } => {}
        }
    }
}

impl MapRanges for Kernel {
    fn map_ranges(&mut self, f: &mut dyn FnMut(&mut TextRange)) {
        let Kernel {
            name: _,
            qualified_name: _,
            range,
            def_range,
            name_range,
            body_range,
            jit_range,
            jit_options,
            params,
            autotune,
            heuristics,
            ops,
            api_calls,
            is_persistent: _,
            has_syntax_errors: _,
            calls: _,
            dot_in_callees: _,
            made_by,
        } = self;
        f(range);
        f(def_range);
        f(name_range);
        f(body_range);
        f(jit_range);
        jit_options.map_ranges(f);
        params.map_ranges(f);
        autotune.map_ranges(f);
        heuristics.map_ranges(f);
        ops.map_ranges(f);
        api_calls.map_ranges(f);
        if let Some(m) = made_by {
            f(&mut m.statement);
            for (callee, applied) in &mut m.chain {
                f(callee);
                f(applied);
            }
        }
    }
}

/// Moves the ranges that lie inside `within` by `to - within.start`; ranges outside it (module
/// constants and config lists the kernel refers to) stay where they are.
pub fn move_block<T: MapRanges>(x: &mut T, within: TextRange, to: usize) {
    if to == within.start {
        return;
    }
    x.map_ranges(&mut |r: &mut TextRange| {
        if r.start >= within.start && r.end <= within.end {
            *r = TextRange::new(r.start - within.start + to, r.end - within.start + to);
        }
    });
}

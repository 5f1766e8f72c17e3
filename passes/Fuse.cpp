// kiln-fuse: groups elementwise, broadcast and reduction ops into kiln.fusion regions.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <string>

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNFUSEPASS
#include "passes/Passes.h.inc"

namespace {

// What an op may be in a group.
enum class Role {
  Barrier,      // never fused: library ops, data movement, rng, callbacks, fusions
  Elementwise,  // producer or root
  Transpose,    // producer only: read through permuted indices by its consumers
  Reduction,    // a root, or a row producer (see rowReduction)
  Constant,     // splat constants are copied into every group using them
};

Role roleOf(Operation *op) {
  if (!isa<KilnDialect>(op->getDialect()) || isa<FusionOp>(op))
    return Role::Barrier;
  if (isa<ConstantOp>(op))
    return Role::Constant;
  if (isa<ReduceOp>(op))
    return Role::Reduction;
  if (op->hasTrait<OpTrait::Elementwise>() || isa<BroadcastInDimOp>(op))
    return Role::Elementwise;
  // A transpose joins the group of a consumer, which then reads the transpose's operand
  // in permuted order: the same strided reads a transposing copy makes, without writing
  // the copy and reading it back. It never starts a group: one whose users are all
  // library kernels stays a host op that kiln-plan-memory makes a view.
  if (isa<TransposeOp>(op))
    return Role::Transpose;
  return Role::Barrier;
}

bool isSplatConstant(Operation *op) {
  DenseElementsAttr value;
  return op && matchPattern(op, m_Constant(&value)) && value.isSplat();
}

// Ops cheaper to recompute in each group that needs them than to write out and
// read back even when the value is written anyway: no transcendental
// functions, no division. (Costlier ops are recomputed too where that saves
// writing the value at all: see onlyFusedUsers.)
bool isCheap(Operation *op) {
  return isa<AbsOp, AddOp, AndOp, BroadcastInDimOp, CompareOp, ConvertOp,
             MaxOp, MinOp, MulOp, NegOp, NotOp, OrOp, ReluOp, SelectOp,
             SubOp, TransposeOp>(op) ||
         isSplatConstant(op);
}

// The first dim a reduction producer reduces, when the group rooted at `root`
// may take it as a row reduction: it reduces trailing dims [k, rank) of a value
// of the root's shape, k >= 1. Tiling the root's dims before k then computes
// each reduction a tile of rows at a time beside its users (kiln-tile-rows),
// so the group reads its inputs from memory once where separate kernels would
// stream them once per reduction (softmax, layer_norm).
std::optional<int64_t> rowReduction(Operation *root, ReduceOp reduce) {
  if (roleOf(root) != Role::Elementwise)
    return std::nullopt;
  auto rootType = dyn_cast<RankedTensorType>(root->getResult(0).getType());
  auto inputType = dyn_cast<RankedTensorType>(reduce.getX().getType());
  if (!rootType || !inputType || rootType.getShape() != inputType.getShape())
    return std::nullopt;
  SmallVector<int64_t> dims(reduce.getDims());
  llvm::sort(dims);
  int64_t rank = inputType.getRank();
  if (dims.empty() || dims.front() < 1)
    return std::nullopt;
  for (auto [i, d] : llvm::enumerate(dims))
    if (d != rank - int64_t(dims.size()) + int64_t(i))
      return std::nullopt;
  return dims.front();
}

// A group under construction. Owned ops move into the fusion; duplicated ops
// are copied into it and stay where they are for their other users.
struct Group {
  Operation *root;
  llvm::SetVector<Operation *> owned;
  llvm::SetVector<Operation *> duplicated;
  // With row reductions: the leading dims of the root's shape the group may be
  // tiled along (the least first reduced dim of its row reductions).
  std::optional<int64_t> rowDims;
  // Why producers were left out, for the report.
  SmallVector<std::pair<Operation *, std::string>> stops;

  bool contains(Operation *op) const {
    return owned.contains(op) || duplicated.contains(op);
  }
};

// Values the group reads from outside, in order of first use.
llvm::SetVector<Value> inputsOf(const Group &group,
                                const llvm::SetVector<Operation *> &ordered) {
  llvm::SetVector<Value> inputs;
  for (Operation *op : ordered)
    for (Value operand : op->getOperands())
      if (!group.contains(operand.getDefiningOp()))
        inputs.insert(operand);
  return inputs;
}

llvm::SetVector<Operation *> inBlockOrder(const Group &group);
SmallVector<Value> outputsOf(const Group &group,
                             const llvm::SetVector<Operation *> &ordered);

class GroupBuilder {
public:
  GroupBuilder(Block &block, unsigned maxInputs, bool report)
      : maxInputs(maxInputs), report(report) {
    for (auto [i, op] : llvm::enumerate(block))
      position[&op] = i;
  }

  // Forms every group, last root first.
  std::vector<Group> formGroups(Block &block) {
    std::vector<Group> groups;
    for (Operation &op : llvm::reverse(block)) {
      Role role = roleOf(&op);
      if (owner.count(&op) || (role != Role::Elementwise && role != Role::Reduction))
        continue;
      Group group = grow(&op, groups.size(), /*rows=*/true);
      // kiln-tile-rows tiles a row group along its one result; a group that
      // would have more results grows again without row reductions.
      std::string abandoned;
      if (group.rowDims) {
        size_t results = outputsOf(group, inBlockOrder(group)).size();
        if (results > 1) {
          for (Operation *owned : group.owned)
            owner.erase(owned);
          group = grow(&op, groups.size(), /*rows=*/false);
          abandoned = "row fusion abandoned: the group would have " +
                      std::to_string(results) + " results";
        }
      }
      if (report)
        emitReport(group, abandoned);
      groups.push_back(std::move(group));
    }
    return groups;
  }

private:
  void emitReport(const Group &group, const std::string &abandoned) {
    InFlightDiagnostic diag = group.root->emitRemark();
    diag << "fusion of " << group.owned.size() + group.duplicated.size()
         << " ops (" << group.duplicated.size() << " duplicated), "
         << group.stops.size() << " producer(s) left out";
    if (group.rowDims)
      diag << ", row fusion over " << *group.rowDims << " leading dim(s)";
    if (!abandoned.empty())
      diag << ", " << abandoned;
    for (auto &[producer, why] : group.stops)
      diag.attachNote(producer->getLoc())
          << "not fused: " << producer->getName() << " " << why;
  }

  Group grow(Operation *root, unsigned id, bool rows) {
    Group group{root, {}, {}, std::nullopt, {}};
    auto stop = [&](Operation *producer, const Twine &why) {
      group.stops.emplace_back(producer, why.str());
    };
    take(group, root, /*duplicate=*/false, id);
    // Latest producer first, so every user a producer could have in the group
    // has been decided before the producer is.
    std::map<unsigned, Operation *, std::greater<unsigned>> frontier;
    auto enqueue = [&](Operation *op) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def->getBlock() == root->getBlock() && !group.contains(def))
          frontier.emplace(position.at(def), def);
    };
    enqueue(root);
    while (!frontier.empty()) {
      Operation *producer = frontier.begin()->second;
      frontier.erase(frontier.begin());
      std::optional<bool> duplicate = decide(group, producer, rows, stop);
      if (!duplicate)
        continue;
      take(group, producer, *duplicate, id);
      enqueue(producer);
    }
    return group;
  }

  // Whether `producer` joins the group and if so whether as a copy; reports
  // through `stop` why not. A row reduction that joins narrows group.rowDims.
  template <typename StopFn>
  std::optional<bool> decide(Group &group, Operation *producer, bool rows,
                             StopFn &stop) {
    Role role = roleOf(producer);
    if (role == Role::Constant)
      return isSplatConstant(producer) ? std::optional(true) : std::nullopt;
    if (role == Role::Barrier) {
      stop(producer, "is not fusible");
      return std::nullopt;
    }
    if (role == Role::Reduction) {
      if (!rows) {
        stop(producer, "is a reduction and row fusion is off for this group");
        return std::nullopt;
      }
      std::optional<int64_t> firstReduced =
          rowReduction(group.root, cast<ReduceOp>(producer));
      if (!firstReduced) {
        stop(producer, "is a reduction that does not reduce trailing dims of "
                       "the root's shape");
        return std::nullopt;
      }
      if (owner.count(producer) || needsCopy(group, producer)) {
        stop(producer, "is a reduction with users outside the group");
        return std::nullopt;
      }
      if (unsigned inputs = inputCountWith(group, producer, false);
          inputs > maxInputs) {
        stop(producer, "would give the group " + Twine(inputs) +
                           " inputs (max " + Twine(maxInputs) + ")");
        return std::nullopt;
      }
      group.rowDims = std::min(group.rowDims.value_or(*firstReduced), *firstReduced);
      return false;
    }
    bool duplicate = owner.count(producer) || needsCopy(group, producer);
    if (duplicate && !isCheap(producer) && !onlyFusedUsers(producer)) {
      stop(producer, owner.count(producer)
                         ? "is in another group and too costly to recompute"
                         : "has a user before the group's root and is too "
                           "costly to recompute");
      return std::nullopt;
    }
    unsigned inputs = inputCountWith(group, producer, duplicate);
    if (inputs > maxInputs) {
      stop(producer, "would give the group " + Twine(inputs) + " inputs (max " +
                         Twine(maxInputs) + ")");
      return std::nullopt;
    }
    return duplicate;
  }

  // Whether every user of `producer` is an op some fusion takes (elementwise or
  // a reduction). Then every group that needs it can recompute it and its value
  // is never written out: on a memory-bound CPU a transcendental recomputed
  // from inputs the group reads anyway costs less than storing it and reading
  // it back (softmax's exp, needed by the sum and by the division). When a
  // library op or the function's return needs it, it is written anyway, and
  // copies would only add work.
  bool onlyFusedUsers(Operation *producer) {
    return llvm::all_of(producer->getUsers(), [](Operation *user) {
      Role role = roleOf(user);
      return role == Role::Elementwise || role == Role::Reduction;
    });
  }

  // False if every user of `producer` is owned by the group or comes after its
  // root (the producer becomes an extra result); true if some user comes
  // earlier, which the producer can only serve by staying outside.
  bool needsCopy(const Group &group, Operation *producer) {
    for (Operation *user : producer->getUsers())
      if (!group.owned.contains(user) &&
          (user->getBlock() != group.root->getBlock() ||
           position.at(user) < position.at(group.root)))
        return true;
    return false;
  }

  unsigned inputCountWith(const Group &group, Operation *producer,
                          bool duplicate) {
    Group trial = group;
    (duplicate ? trial.duplicated : trial.owned).insert(producer);
    llvm::SetVector<Operation *> all(trial.owned.begin(), trial.owned.end());
    all.insert(trial.duplicated.begin(), trial.duplicated.end());
    unsigned count = 0;
    for (Value input : inputsOf(trial, all))
      if (!isSplatConstant(input.getDefiningOp()))
        ++count;
    return count;
  }

  void take(Group &group, Operation *op, bool duplicate, unsigned id) {
    if (duplicate) {
      group.duplicated.insert(op);
    } else {
      group.owned.insert(op);
      owner[op] = id;
    }
  }

  unsigned maxInputs;
  bool report;
  DenseMap<Operation *, unsigned> position;
  DenseMap<Operation *, unsigned> owner;
};

// The group's ops in block order.
llvm::SetVector<Operation *> inBlockOrder(const Group &group) {
  SmallVector<Operation *> ops(group.owned.begin(), group.owned.end());
  llvm::append_range(ops, group.duplicated);
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return llvm::SetVector<Operation *>(ops.begin(), ops.end());
}

// Owned results some op outside the group's owned ops uses.
SmallVector<Value> outputsOf(const Group &group,
                             const llvm::SetVector<Operation *> &ordered) {
  SmallVector<Value> outputs;
  for (Operation *op : ordered) {
    if (!group.owned.contains(op))
      continue;
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !group.owned.contains(user);
          }))
        outputs.push_back(result);
  }
  return outputs;
}

// Builds the group's kiln.fusion before its root; its results are not used yet.
FusionOp buildFusion(const Group &group, SmallVectorImpl<Value> &outputs) {
  llvm::SetVector<Operation *> ordered = inBlockOrder(group);
  llvm::SetVector<Value> inputs = inputsOf(group, ordered);
  outputs = outputsOf(group, ordered);
  OpBuilder builder(group.root);
  FusionOp fusion = FusionOp::create(
      builder, group.root->getLoc(), inputs.getArrayRef(),
      [&](OpBuilder &body, Location loc, ValueRange args) {
        IRMapping mapping;
        mapping.map(inputs.getArrayRef(), args);
        for (Operation *op : ordered)
          body.clone(*op, mapping);
        SmallVector<Value> yielded = llvm::map_to_vector(
            outputs, [&](Value v) { return mapping.lookup(v); });
        YieldOp::create(body, loc, yielded);
      });
  if (group.rowDims)
    fusion->setAttr(KilnDialect::getRowDimsAttrName(),
                    builder.getI64IntegerAttr(*group.rowDims));
  return fusion;
}

// Drops the results of `fusion` nobody uses (an op one group owns may have had
// later users only in groups that copied it), then the inputs left unread.
void dropUnusedResults(FusionOp fusion) {
  if (llvm::all_of(fusion.getResults(), [](Value r) { return !r.use_empty(); }))
    return;
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  SmallVector<Value> kept;
  SmallVector<Value> replaced;
  for (auto [result, value] : llvm::zip(fusion.getResults(), yield.getValues()))
    if (!result.use_empty()) {
      kept.push_back(value);
      replaced.push_back(result);
    }
  yield.getValuesMutable().assign(kept);
  OpBuilder builder(fusion);
  OperationState state(fusion.getLoc(), fusion->getName());
  state.addAttributes(fusion->getAttrs());
  state.addOperands(fusion.getInputs());
  state.addTypes(ValueRange(kept).getTypes());
  state.addRegion()->takeBody(fusion.getBody());
  Operation *slim = builder.create(state);
  for (auto [old, now] : llvm::zip(replaced, slim->getResults()))
    old.replaceAllUsesWith(now);
  fusion.erase();
  Block &body = slim->getRegion(0).front();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  for (int i = int(body.getNumArguments()) - 1; i >= 0; --i)
    if (body.getArgument(i).use_empty()) {
      body.eraseArgument(i);
      slim->eraseOperand(i);
    }
}

struct KilnFusePass : impl::KilnFusePassBase<KilnFusePass> {
  using KilnFusePassBase::KilnFusePassBase;

  void runOnOperation() override {
    for (Block &block : getOperation().getBody())
      fuseBlock(block);
  }

  void fuseBlock(Block &block) {
    std::vector<Group> groups =
        GroupBuilder(block, maxInputs, report).formGroups(block);
    // Build every fusion from the untouched ops first: an op copied into one
    // group may be owned (and erased) by another.
    std::vector<std::pair<FusionOp, SmallVector<Value>>> built;
    for (const Group &group : groups) {
      SmallVector<Value> outputs;
      FusionOp fusion = buildFusion(group, outputs);
      built.emplace_back(fusion, std::move(outputs));
    }
    for (auto [group, fusionAndOutputs] : llvm::zip(groups, built)) {
      auto &[fusion, outputs] = fusionAndOutputs;
      for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
        output.replaceUsesWithIf(result, [&](OpOperand &use) {
          return !group.owned.contains(use.getOwner());
        });
    }
    for (const Group &group : groups) {
      llvm::SetVector<Operation *> ordered = inBlockOrder(group);
      for (Operation *op : llvm::reverse(ordered))
        if (group.owned.contains(op))
          op->erase();
    }
    for (auto &[fusion, outputs] : built)
      dropUnusedResults(fusion);
    // Splat constants now live inside the fusions that use them.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isa<ConstantOp>(op) && op.use_empty())
        op.erase();
  }
};

} // namespace
} // namespace mlir::kiln

// Records the first bad class target a loss kernel meets as an IndexErrorRecord (vkml/index.h)
// at `rec` (0: no record): claimed, then which operand and the value. The host reads it back.
void loss_report_bad_target(uint64_t rec, uint operand, int64_t value) {
  if (rec == 0ul) return;
  if (atomicCompSwap(PU32(rec).v, 0u, 1u) == 0u) {
    PU32(rec + 4ul).v = operand;
    PI64(rec + 8ul).v = value;
  }
}

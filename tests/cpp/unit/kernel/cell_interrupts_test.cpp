// Which cell an interrupt belongs to: one frame per cell, none while idle,
// kept for a cell on its way.
#include "kernel/cell_interrupts.h"

#include <gtest/gtest.h>

namespace o4s::kernel {
namespace {

TEST(CellInterrupts, AnIdleInterruptStopsNothingAndIsNotKept) {
  CellInterrupts interrupts;
  EXPECT_FALSE(interrupts.claim(false));
  auto begun = interrupts.begin();
  EXPECT_FALSE(begun.interrupted_already);
}

TEST(CellInterrupts, AnOutstandingCellGetsOneFrameNamingIt) {
  CellInterrupts interrupts;
  auto first = interrupts.begin();
  interrupts.end();
  auto second = interrupts.begin();
  EXPECT_GT(second.seq, first.seq);
  EXPECT_EQ(interrupts.claim(false), second.seq);
  // Pressed again: the signal is sent again, the frame is not.
  EXPECT_FALSE(interrupts.claim(false));
  interrupts.end();
  EXPECT_FALSE(interrupts.begin().interrupted_already);
}

TEST(CellInterrupts, AnInterruptForACellOnItsWayIsKeptForIt) {
  CellInterrupts interrupts;
  EXPECT_FALSE(interrupts.claim(true));
  auto begun = interrupts.begin();
  EXPECT_TRUE(begun.interrupted_already);
  // Its frame went out with the cell: no second one.
  EXPECT_FALSE(interrupts.claim(false));
  interrupts.end();
  EXPECT_FALSE(interrupts.begin().interrupted_already);
}

TEST(CellInterrupts, AnExecuteCallWaitingMakesTheInterruptItsCells) {
  CellInterrupts interrupts;
  {
    CellInterrupts::Entered entered(interrupts);
    EXPECT_FALSE(interrupts.claim(false));
    EXPECT_TRUE(interrupts.begin().interrupted_already);
    interrupts.end();
  }
  EXPECT_FALSE(interrupts.begin().interrupted_already);
}

TEST(CellInterrupts, WhatACallThatSentNoCellKeptDiesWithIt) {
  CellInterrupts interrupts;
  {
    CellInterrupts::Entered entered(interrupts);
    EXPECT_FALSE(interrupts.claim(false));
    // The call fails before its cell is sent (a dead worker).
  }
  EXPECT_FALSE(interrupts.begin().interrupted_already);
}

TEST(CellInterrupts, AKeptInterruptCanBeForgotten) {
  CellInterrupts interrupts;
  EXPECT_FALSE(interrupts.claim(true));
  interrupts.forget_kept();
  EXPECT_FALSE(interrupts.begin().interrupted_already);
}

}  // namespace
}  // namespace o4s::kernel

// SPDX-License-Identifier: GPL-2.0
/* LITE RPC: see lite_rpc.h (written with the RPC data and control paths). */

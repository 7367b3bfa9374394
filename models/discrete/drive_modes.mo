// Enumeration types (MLS 3.6, §4.9.5) end to end. A drive starts in the
// mode `start_mode` (slow: x' = 1) and switches to `fast` (x' = 2) when
// x passes 1, so x = t up to t = 1 and x = 1 + 2(t - 1) after; the
// result column of `mode` is its ordinal (2, then 3). `gear` counts the
// modes through a `for` loop over the type, `top` is `Mode(3)`.
package DriveModes
  type Mode = enumeration(off "no drive", slow "half speed", fast "full speed") "drive mode";

  model Drive "x' by the mode, which switches to fast at x = 1"
    parameter Mode start_mode = Mode.off;
    Real x(start = 0, fixed = true);
    discrete Mode mode(start = start_mode);
    Integer ordinal = Integer(mode);
  equation
    der(x) = if mode == Mode.off then 0 elseif mode < Mode.fast then 1 else 2;
    when x > 1 and pre(mode) <> Mode.fast then
      mode = Mode.fast;
    end when;
  end Drive;

  model Run
    Drive drive(start_mode = Mode.slow);
    parameter Mode top = Mode(3);
    Real gear[3];
  equation
    for e in Mode loop
      gear[e] = e;
    end for;
    annotation(experiment(StopTime = 2));
  end Run;
end DriveModes;

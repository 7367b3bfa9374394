model Limiter
  parameter Boolean clip = false;
  Real u = sin(time);
  Real y;
  Real z;
equation
  if u > 0.5 then
    y = 0.5;
  else
    y = u;
  end if;
  if clip then
    z = y;
  end if;
end Limiter;

model Top
  Limiter lim;
end Top;

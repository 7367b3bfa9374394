connector Fluid
  Real p;
  flow Real m_flow;
  stream Real h;
end Fluid;

model Tank
  Fluid port;
equation
  port.p = 1;
  port.h = 2;
end Tank;

model System
  Tank tank;
end System;

C     Akzo Nobel (IVP test set chemakzo) with Hairer's RADAU5, the
C     reference daec is compared with. Not built by cargo; see
C     README.md in this directory.
C     Usage: akzo TOL NREP   (NREP > 1 also prints microseconds per solve)
      PROGRAM AKZO
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      PARAMETER (ND=6, LWORK=4*ND*ND+12*ND+20+ND*ND, LIWORK=3*ND+20)
      DIMENSION Y(ND),WORK(LWORK),IWORK(LIWORK),YREF(ND),RPAR(1)
      INTEGER IPAR(1)
      EXTERNAL FAKZO,JAKZO,MAKZO,SOLOUT
      CHARACTER*32 ARG
      INTEGER*8 T0,T1,RATE
      DATA YREF/0.1150794920661702D0,0.1203831471567715D-2,
     &  0.1611562887407974D0,0.3656156421249283D-3,
     &  0.1708010885264404D-1,0.4873531310307455D-2/
      CALL GETARG(1,ARG)
      READ(ARG,*) TOL
      CALL GETARG(2,ARG)
      READ(ARG,*) NREP
      DO 100 IREP=1,NREP
        IF (IREP.EQ.2) CALL SYSTEM_CLOCK(T0,RATE)
        N=ND
        X=0.D0
        XEND=180.D0
        H=1.D-10
        Y(1)=0.444D0
        Y(2)=0.00123D0
        Y(3)=0.D0
        Y(4)=0.007D0
        Y(5)=0.D0
        Y(6)=115.83D0*Y(1)*Y(4)
        RTOL=TOL
        ATOL=TOL
        ITOL=0
        DO 10 I=1,20
          IWORK(I)=0
          WORK(I)=0.D0
 10     CONTINUE
        IWORK(5)=6
        IPAR(1)=0
        IJAC=1
        MLJAC=N
        MUJAC=0
        IMAS=1
        MLMAS=N
        MUMAS=0
        IOUT=0
        CALL RADAU5(N,FAKZO,X,Y,XEND,H,RTOL,ATOL,ITOL,
     &     JAKZO,IJAC,MLJAC,MUJAC,MAKZO,IMAS,MLMAS,MUMAS,SOLOUT,IOUT,
     &     WORK,LWORK,IWORK,LIWORK,RPAR,IPAR,IDID)
 100  CONTINUE
      CALL SYSTEM_CLOCK(T1,RATE)
      ERRR=0.D0
      ERRA=0.D0
      DO 20 I=1,6
        ERRA=MAX(ERRA,ABS(Y(I)-YREF(I)))
        ERRR=MAX(ERRR,ABS((Y(I)-YREF(I))/YREF(I)))
 20   CONTINUE
      WRITE(6,*) 'tol',TOL,'idid',IDID
      WRITE(6,*) 'fcn',IWORK(14),'jac',IWORK(15),'steps',IWORK(16),
     &  'accpt',IWORK(17),'rejct',IWORK(18),'dec',IWORK(19),
     &  'sol',IWORK(20)
      WRITE(6,'(6E24.16)') (Y(I),I=1,6)
      WRITE(6,*) 'maxrel',ERRR,'maxabs',ERRA,'scd',-LOG10(ERRR)
      IF (NREP.GT.1) WRITE(6,*) 'us/solve',
     &  1.D6*DBLE(T1-T0)/DBLE(RATE)/DBLE(NREP-1)
      END

      SUBROUTINE FAKZO(N,X,Y,F,RPAR,IPAR)
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION Y(N),F(N)
      INTEGER IPAR(1)
      PARAMETER (AK1=18.7D0,AK2=0.58D0,AK3=0.09D0,AK4=0.42D0,
     &  BK=34.4D0,AKLA=3.3D0,AKS=115.83D0,PCO2=0.9D0,HH=737.D0)
      IF (Y(2).LT.0.D0) THEN
        IPAR(1)=-1
        RETURN
      END IF
      IPAR(1)=0
      S=SQRT(Y(2))
      R1=AK1*Y(1)**4*S
      R2=AK2*Y(3)*Y(4)
      R3=AK2/BK*Y(1)*Y(5)
      R4=AK3*Y(1)*Y(4)**2
      R5=AK4*Y(6)**2*S
      FIN=AKLA*(PCO2/HH-Y(2))
      F(1)=-2.D0*R1+R2-R3-R4
      F(2)=-0.5D0*R1-R4-0.5D0*R5+FIN
      F(3)=R1-R2+R3
      F(4)=-R2+R3-2.D0*R4
      F(5)=R2-R3+R5
      F(6)=AKS*Y(1)*Y(4)-Y(6)
      RETURN
      END

      SUBROUTINE JAKZO(N,X,Y,DFY,LDFY,RPAR,IPAR)
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION Y(N),DFY(LDFY,N)
      DIMENSION DR(5,6)
      PARAMETER (AK1=18.7D0,AK2=0.58D0,AK3=0.09D0,AK4=0.42D0,
     &  BK=34.4D0,AKLA=3.3D0,AKS=115.83D0,PCO2=0.9D0,HH=737.D0)
      S=SQRT(Y(2))
      DO 1 I=1,5
      DO 1 J=1,6
 1    DR(I,J)=0.D0
C     derivatives of the rates r1..r5 (rows) w.r.t. y1..y6
      DR(1,1)=4.D0*AK1*Y(1)**3*S
      DR(1,2)=0.5D0*AK1*Y(1)**4/S
      DR(2,3)=AK2*Y(4)
      DR(2,4)=AK2*Y(3)
      DR(3,1)=AK2/BK*Y(5)
      DR(3,5)=AK2/BK*Y(1)
      DR(4,1)=AK3*Y(4)**2
      DR(4,4)=2.D0*AK3*Y(1)*Y(4)
      DR(5,2)=0.5D0*AK4*Y(6)**2/S
      DR(5,6)=2.D0*AK4*Y(6)*S
      DO 2 J=1,6
        DFY(1,J)=-2.D0*DR(1,J)+DR(2,J)-DR(3,J)-DR(4,J)
        DFY(2,J)=-0.5D0*DR(1,J)-DR(4,J)-0.5D0*DR(5,J)
        DFY(3,J)=DR(1,J)-DR(2,J)+DR(3,J)
        DFY(4,J)=-DR(2,J)+DR(3,J)-2.D0*DR(4,J)
        DFY(5,J)=DR(2,J)-DR(3,J)+DR(5,J)
        DFY(6,J)=0.D0
 2    CONTINUE
      DFY(2,2)=DFY(2,2)-AKLA
      DFY(6,1)=AKS*Y(4)
      DFY(6,4)=AKS*Y(1)
      DFY(6,6)=-1.D0
      RETURN
      END

      SUBROUTINE MAKZO(N,AM,LMAS,RPAR,IPAR)
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION AM(LMAS,N)
      DO 1 I=1,N
      DO 1 J=1,N
 1    AM(I,J)=0.D0
      DO 2 I=1,5
 2    AM(I,I)=1.D0
      RETURN
      END

      SUBROUTINE SOLOUT(NR,XOLD,X,Y,CONT,LRC,N,RPAR,IPAR,IRTRN)
      IMPLICIT DOUBLE PRECISION (A-H,O-Z)
      DIMENSION Y(N),CONT(LRC)
      RETURN
      END
